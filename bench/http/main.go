// The HTTP load generator of bench/http.sh: publish, then consume and delete, over lmstfy's
// API (which redelay serve and the lmstfy server both speak), with keep-alive connections
// and concurrent clients. Standard library only. Prints one JSON line per phase.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type result struct {
	System    string  `json:"system"`
	Phase     string  `json:"phase"`
	Clients   int     `json:"clients"`
	Jobs      int64   `json:"jobs"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"per_second"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	Errors    int64   `json:"errors"`
}

func pct(v []time.Duration, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	i := int(p * float64(len(v)-1))
	return float64(v[i].Microseconds()) / 1000
}

func main() {
	system := flag.String("system", "redelay", "name in the output")
	base := flag.String("base", "http://127.0.0.1:7777", "data API base URL")
	token := flag.String("token", "", "namespace token")
	ns := flag.String("ns", "bench", "namespace")
	queue := flag.String("queue", "q", "queue")
	n := flag.Int("n", 20000, "jobs")
	c := flag.Int("c", 16, "concurrent clients")
	body := flag.Int("body", 32, "body bytes")
	flag.Parse()

	tr := &http.Transport{MaxIdleConns: *c * 2, MaxIdleConnsPerHost: *c * 2, IdleConnTimeout: time.Minute}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	payload := strings.Repeat("x", *body)
	url := fmt.Sprintf("%s/api/%s/%s", *base, *ns, *queue)

	do := func(method, u string, b io.Reader) (int, []byte, error) {
		req, _ := http.NewRequest(method, u, b)
		req.Header.Set("X-Token", *token)
		res, err := client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		return res.StatusCode, data, err
	}

	run := func(phase string, work func(lat *[]time.Duration, errs *int64, left *int64)) {
		var left int64 = int64(*n)
		var errs int64
		lats := make([][]time.Duration, *c)
		var wg sync.WaitGroup
		start := time.Now()
		for i := 0; i < *c; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				work(&lats[i], &errs, &left)
			}(i)
		}
		wg.Wait()
		secs := time.Since(start).Seconds()
		var all []time.Duration
		for _, l := range lats {
			all = append(all, l...)
		}
		r := result{*system, phase, *c, int64(len(all)), secs, float64(len(all)) / secs, pct(all, 0.5), pct(all, 0.99), errs}
		out, _ := json.Marshal(r)
		fmt.Println(string(out))
	}

	// Publish n jobs, due now.
	run("publish", func(lat *[]time.Duration, errs *int64, left *int64) {
		for atomic.AddInt64(left, -1) >= 0 {
			t := time.Now()
			st, _, err := do("PUT", url+"?delay=0&tries=3&ttl=0", strings.NewReader(payload))
			if err != nil || st != 201 {
				atomic.AddInt64(errs, 1)
				continue
			}
			*lat = append(*lat, time.Since(t))
		}
	})
	// Consume and delete them: one job per request, as lmstfy clients do by default.
	run("consume+delete", func(lat *[]time.Duration, errs *int64, left *int64) {
		for atomic.AddInt64(left, -1) >= 0 {
			for {
				t := time.Now()
				st, data, err := do("GET", url+"?ttr=30&timeout=1", nil)
				if err != nil || (st != 200 && st != 404) {
					atomic.AddInt64(errs, 1)
					break
				}
				if st == 404 {
					continue
				}
				var job struct {
					JobID string `json:"job_id"`
				}
				if json.Unmarshal(data, &job) != nil {
					atomic.AddInt64(errs, 1)
					break
				}
				st, _, err = do("DELETE", url+"/job/"+job.JobID, nil)
				if err != nil || st != 204 {
					atomic.AddInt64(errs, 1)
				}
				*lat = append(*lat, time.Since(t))
				break
			}
		}
	})
	os.Exit(0)
}
