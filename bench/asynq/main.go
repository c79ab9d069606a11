// The asynq side of bench/single.sh: phase (a)'s single publishes, as asynq 0.26 does them.
//
//	REDIS_URL=redis://127.0.0.1:PORT go run . [--single N] [--json]
//
// N tasks (default 10,000) of 32-byte payloads are enqueued one at a time, each awaited before
// the next (Client.Enqueue with ProcessIn one hour: asynq's scheduled set, as redelay's and
// BullMQ's delayed publishes), on one Client (go-redis' pool; one call in flight). It reports
// tasks per second and the Redis CPU per task (INFO cpu, used_cpu_user + used_cpu_sys, before
// and after), in the JSON schema of the other drivers' phase (a). It runs FLUSHDB first: point
// it only at a Redis of its own.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// redisCPUSeconds is the CPU time the Redis server has used so far.
func redisCPUSeconds(ctx context.Context, rdb *redis.Client) (float64, error) {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, line := range strings.Split(info, "\r\n") {
		for _, key := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if strings.HasPrefix(line, key) {
				v, err := strconv.ParseFloat(strings.TrimPrefix(line, key), 64)
				if err != nil {
					return 0, fmt.Errorf("INFO cpu: %q: %w", line, err)
				}
				total += v
			}
		}
	}
	return total, nil
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func main() {
	single := flag.Int("single", 10_000, "tasks enqueued one at a time")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Parse()
	url := os.Getenv("REDIS_URL")
	if url == "" {
		fmt.Fprintln(os.Stderr, "asynq bench: REDIS_URL is not set")
		os.Exit(2)
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "asynq bench: REDIS_URL:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	admin := redis.NewClient(opt)
	defer admin.Close()
	if err := admin.FlushDB(ctx).Err(); err != nil {
		fmt.Fprintln(os.Stderr, "asynq bench: FLUSHDB:", err)
		os.Exit(1)
	}
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: opt.Addr, DB: opt.DB, Password: opt.Password})
	defer client.Close()
	payload := []byte(strings.Repeat("x", 32))

	// One enqueue before the clock starts, as the other drivers' first call loads their script.
	if _, err := client.Enqueue(asynq.NewTask("m", payload), asynq.ProcessIn(time.Hour)); err != nil {
		fmt.Fprintln(os.Stderr, "asynq bench: enqueue:", err)
		os.Exit(1)
	}
	cpu0, err := redisCPUSeconds(ctx, admin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "asynq bench:", err)
		os.Exit(1)
	}
	t0 := time.Now()
	for i := 0; i < *single; i++ {
		if _, err := client.Enqueue(asynq.NewTask("m", payload), asynq.ProcessIn(time.Hour)); err != nil {
			fmt.Fprintln(os.Stderr, "asynq bench: enqueue:", err)
			os.Exit(1)
		}
	}
	seconds := time.Since(t0).Seconds()
	cpu1, err := redisCPUSeconds(ctx, admin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "asynq bench:", err)
		os.Exit(1)
	}
	perS := float64(*single) / seconds
	cpuUs := (cpu1 - cpu0) * 1e6 / float64(*single)
	if *asJSON {
		out := map[string]any{
			"system":  "asynq",
			"version": "0.26.0",
			"publish": map[string]any{
				"single": map[string]any{"count": *single, "seconds": round(seconds, 3), "per_s": math.Round(perS)},
			},
			"redis_cpu_us_per_msg": map[string]any{"publish_single": round(cpuUs, 2)},
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			os.Exit(1)
		}
		return
	}
	fmt.Printf("(a) single enqueue: %d in %.3f s = %.0f/s, Redis CPU %.2f µs per task\n", *single, seconds, perS, cpuUs)
}
