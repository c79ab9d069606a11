module redelay.dev/bench/http

go 1.22
