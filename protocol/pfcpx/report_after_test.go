package pfcpx

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/l25gc/l25gc/upf/rules"
)

// What a report handler leaves to follow its answer (the SMF's paging,
// TS 23.502 4.2.3.3 steps 2b-3a) runs once the Session Report Response
// has reached the UPF: here the follow-up holds until the UPF has the
// answer, which it could not get if the follow-up ran first. It runs
// once, and a handler that leaves work after it returned is told no.
func TestReportFollowUpRunsAfterTheAnswerReachedTheUPF(t *testing.T) {
	upf, c, s := clientWithSession(t)
	answered, followed := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	late := make(chan context.Context, 1)
	c.OnReport(func(ctx context.Context, _ string, _ *rules.Report) uint8 {
		left := rules.LeaveAfterAnswer(ctx, func() {
			runs.Add(1)
			<-answered // the UPF got the response before this ran on
			close(followed)
		})
		if !left {
			t.Error("the client's handler context does not take a follow-up")
		}
		late <- ctx
		return CauseAccepted
	})
	if rsp := upf.report(t, s.CPSEID, dldr(2)); CauseOf(rsp) != CauseAccepted {
		t.Fatalf("report answered cause %d, want 1", CauseOf(rsp))
	}
	close(answered)
	select {
	case <-followed:
	case <-time.After(10 * time.Second): // bounds a broken client only
		t.Fatal("the follow-up never ran")
	}
	if rules.LeaveAfterAnswer(<-late, func() {}) {
		t.Error("a follow-up left after the handler returned was taken")
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("follow-up ran %d times, want 1", n)
	}
}

// Without a client that offers it (a test's fake N4), LeaveAfterAnswer
// says no, so the handler runs its follow-up itself.
func TestLeaveAfterAnswerNeedsTheClientsContext(t *testing.T) {
	if rules.LeaveAfterAnswer(context.Background(), func() {}) {
		t.Fatal("a plain context took a follow-up")
	}
	ctx, after := rules.WithAfterAnswer(context.Background())
	var order []int
	for i := range 3 {
		if !rules.LeaveAfterAnswer(ctx, func() { order = append(order, i) }) {
			t.Fatal("the offered context refused a follow-up")
		}
	}
	then := after.Take()
	if then == nil {
		t.Fatal("Take lost the follow-ups")
	}
	then()
	if len(order) != 3 || order[0] != 0 || order[2] != 2 {
		t.Fatalf("follow-ups ran as %v, want 0 1 2", order)
	}
	if _, after := rules.WithAfterAnswer(context.Background()); after.Take() != nil {
		t.Fatal("Take of nothing is not nil")
	}
}
