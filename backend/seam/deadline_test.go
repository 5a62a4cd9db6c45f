package seam

import (
	"context"
	"errors"
	"testing"
	"time"

	"connectrpc.com/connect"
)

func TestCallerEndedCoversTheDaemonsEarlierDeadline(t *testing.T) {
	serverGaveUp := connect.NewError(connect.CodeCanceled, context.DeadlineExceeded)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if !callerEnded(ctx, serverGaveUp) || ctx.Err() == nil {
		t.Fatal("a deadline the daemon hit first is the caller's")
	}
	far, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	if callerEnded(far, serverGaveUp) {
		t.Fatal("a far deadline is not the reason")
	}
	near, cancel3 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel3()
	if callerEnded(near, errors.New("connection refused")) {
		t.Fatal("another error is not the caller's deadline")
	}
}
