package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// RateLimit wraps h so that each cause (a record's level and message: the
// log sites use fixed messages and put the variable parts in attributes)
// writes at most burst lines per period. Past that the lines are dropped
// and counted, and once the period ends one line says how many were
// suppressed, so a flood of bad requests costs a bounded number of lines.
func RateLimit(h slog.Handler, burst int, period time.Duration) slog.Handler {
	return &rateHandler{h: h, st: &rateState{burst: burst, period: period, causes: map[rateKey]*rateCause{}}}
}

// maxCauses bounds the causes tracked; past it new causes are not limited
// (the messages are fixed strings in the code, so this is never reached in
// practice).
const maxCauses = 4096

type rateKey struct {
	level slog.Level
	msg   string
}

type rateCause struct {
	start      time.Time // of the current period
	n          int       // lines written in it
	suppressed int
	timer      *time.Timer
}

type rateState struct {
	burst  int
	period time.Duration
	mu     sync.Mutex
	causes map[rateKey]*rateCause
}

type rateHandler struct {
	h  slog.Handler
	st *rateState
}

func (r *rateHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *rateHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &rateHandler{h: r.h.WithAttrs(as), st: r.st}
}

func (r *rateHandler) WithGroup(name string) slog.Handler {
	return &rateHandler{h: r.h.WithGroup(name), st: r.st}
}

func (r *rateHandler) Handle(ctx context.Context, rec slog.Record) error {
	if !r.allow(rec) {
		return nil
	}
	return r.h.Handle(ctx, rec)
}

// allow counts rec against its cause and reports whether it may be written.
func (r *rateHandler) allow(rec slog.Record) bool {
	st := r.st
	k := rateKey{rec.Level, rec.Message}
	st.mu.Lock()
	defer st.mu.Unlock()
	c := st.causes[k]
	if c == nil {
		if len(st.causes) >= maxCauses {
			return true
		}
		c = &rateCause{start: rec.Time}
		st.causes[k] = c
	}
	if rec.Time.Sub(c.start) >= st.period && c.suppressed == 0 {
		c.start, c.n = rec.Time, 0
	}
	if c.n < st.burst {
		c.n++
		return true
	}
	c.suppressed++
	if c.timer == nil {
		// The summary goes out when the period ends, even if the flood
		// stopped and no further line of this cause comes.
		wait := st.period - rec.Time.Sub(c.start)
		c.timer = time.AfterFunc(max(wait, 0), func() { r.flush(k) })
	}
	return false
}

// flush writes the summary of k's suppressed lines and opens a new period.
func (r *rateHandler) flush(k rateKey) {
	st := r.st
	st.mu.Lock()
	c := st.causes[k]
	n := c.suppressed
	c.suppressed, c.n, c.timer = 0, 0, nil
	c.start = time.Now()
	st.mu.Unlock()
	if n == 0 {
		return
	}
	msg := fmt.Sprintf("suppressed %d similar log lines", n)
	rec := slog.NewRecord(time.Now(), k.level, msg, 0)
	rec.AddAttrs(slog.String("cause", k.msg), slog.Duration("period", st.period))
	r.h.Handle(context.Background(), rec)
}
