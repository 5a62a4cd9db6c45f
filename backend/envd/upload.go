package envd

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// Upload writes body to path in the sandbox through envd's POST /files
// (a multipart form with one "file" part, which every envd version and
// sandtop's daemon take), as the client's user. envd creates the missing
// directories; the file gets the user's default mode (not executable).
func (c *Client) Upload(ctx context.Context, path string, body io.Reader) error {
	pr, pw := io.Pipe()
	form := multipart.NewWriter(pw)
	go func() {
		part, err := form.CreateFormFile("file", path)
		if err == nil {
			_, err = io.Copy(part, body)
		}
		if err == nil {
			err = form.Close()
		}
		pw.CloseWithError(err)
	}()
	q := url.Values{"path": {path}}
	if c.user != "" {
		q.Set("username", c.user)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/files?"+q.Encode(), pr)
	if err != nil {
		pr.CloseWithError(err)
		return err
	}
	req.Header.Set("Content-Type", form.FormDataContentType())
	if c.token != "" {
		req.Header.Set("X-Access-Token", c.token)
	}
	res, err := c.http.Do(req)
	if err != nil {
		pr.CloseWithError(err)
		return fmt.Errorf("upload %s: %w", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return fmt.Errorf("upload %s: HTTP %d: %s", path, res.StatusCode, strings.TrimSpace(string(msg)))
	}
	return nil
}
