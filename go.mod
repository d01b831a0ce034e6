module github.com/nfsd-uring/nfsd-uring

go 1.26.0

require (
	github.com/pkg/profile v1.7.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/felixge/fgprof v0.9.3 // indirect
	github.com/google/pprof v0.0.0-20211214055906-6f57359322fd // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/schollz/progressbar/v3 v3.19.0 // indirect
	golang.org/x/term v0.48.0 // indirect
)
