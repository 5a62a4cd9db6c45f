package target

import "sandtop/backend/e2b"

// FromListing is an E2B target known only from the listing (GET
// /v2/sandboxes): its name, layout, state and metadata, but no envd token
// yet. Refresh describes it (GET /sandboxes/{id}) once a connection is
// wanted, so a fleet of N sandboxes costs its listing pages, not N
// describes. A paused one carries an Err wrapping ErrPaused.
func FromListing(client *e2b.Client, cfg Config, sb e2b.Sandbox) Target {
	t := e2bLayout(cfg, sb.ID)
	t.e2b = client
	t = withDetail(t, sb, e2b.Connection{})
	t.Endpoint = "" // not described yet: Refresh gives the address
	return t
}
