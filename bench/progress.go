package bench

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress is a live line on stderr for one phase; the zero value is quiet.
type progress struct {
	bar   *progressbar.ProgressBar
	bytes bool
}

type progressFunc func(t *Target, p *Phase) progress

func (p progress) add(bytes, ops int64) {
	if p.bar == nil {
		return
	}
	if p.bytes {
		p.bar.Add64(bytes)
	} else {
		p.bar.Add64(ops)
	}
}

func (p progress) done() {
	if p.bar != nil {
		p.bar.Finish()
	}
}

// startProgress returns a live bar when enabled and stderr is a terminal.
func (r *Runner) startProgress(t *Target, p *Phase) progress {
	if !r.Cfg.Progress || !term.IsTerminal(int(os.Stderr.Fd())) {
		return progress{}
	}
	bytes := p.Workload == "readmatrix" || p.Workload == "ior-easy" || p.Workload == "ior-hard"
	total := p.Total
	if total <= 0 {
		total = -1
	}
	desc := t.Label() + " " + p.Key()
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
	}
	if bytes {
		opts = append(opts, progressbar.OptionShowBytes(true))
	} else {
		opts = append(opts, progressbar.OptionSetItsString("ops"), progressbar.OptionShowIts())
	}
	return progress{bar: progressbar.NewOptions64(total, opts...), bytes: bytes}
}
