# nfsd-uring in a container.
#
#   docker build -t nfsd-uring .
#   docker run --rm -p 2049:2049 -p 9249:9249 -v /srv/data:/export \
#       -v nfsd-uring-state:/var/lib/nfsd-uring --cap-add DAC_READ_SEARCH nfsd-uring
#
# Docker's default seccomp profile refuses io_uring (io_uring_setup answers
# EPERM), so --engine auto runs the portable engine and logs one line
# saying why. For the io_uring engine give the container a profile that
# allows io_uring_setup, io_uring_enter and io_uring_register (or
# --security-opt seccomp=unconfined). See README, "Administration".
#
# Capabilities: Docker's defaults cover CHOWN, DAC_OVERRIDE, FOWNER, FSETID,
# MKNOD, SETUID, SETGID and NET_BIND_SERVICE; add DAC_READ_SEARCH
# (open_by_handle_at). SYS_ADMIN is optional (hides filesystems mounted
# inside an export; without it the server refuses to cross into them).

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# No cgo: the binary is static and runs on any base image.
RUN CGO_ENABLED=0 go build -trimpath -o /out/nfsd-uring ./cmd/nfsd-uring

FROM debian:bookworm-slim
COPY --from=build /out/nfsd-uring /usr/local/bin/nfsd-uring
VOLUME ["/export", "/var/lib/nfsd-uring"]
EXPOSE 2049/tcp 9249/tcp
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/nfsd-uring"]
CMD ["--export", "/export", "--state-dir", "/var/lib/nfsd-uring", "--listen", ":2049", "--metrics", ":9249"]
