package store

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"slipstream/server/provider"
)

// Cooldowns is provider.Cooldowns shared across replicas: checks read the
// local table (no round trip per candidate credential); a cooldown, a
// recovery or a forgotten credential is applied locally and broadcast,
// and every replica applies the others' broadcasts to its own table.
type Cooldowns struct {
	r     *remote
	local provider.Cooldowns
}

var _ provider.Cooldowns = (*Cooldowns)(nil)

// Cooldowns wraps local so that credential cooldowns reach every replica;
// without Redis it returns local.
func (s *Store) Cooldowns(local provider.Cooldowns) provider.Cooldowns {
	r := s.remote
	if r == nil {
		return local
	}
	c := &Cooldowns{r: r, local: local}
	r.mu.Lock()
	r.cools = append(r.cools, c)
	r.mu.Unlock()
	return c
}

// Until implements provider.Cooldowns from the local table.
func (c *Cooldowns) Until(cred, model uint64, now int64) int64 {
	return c.local.Until(cred, model, now)
}

// Cool implements provider.Cooldowns and tells the other replicas.
func (c *Cooldowns) Cool(cred, model uint64, now int64, b provider.Backoff) int64 {
	until := c.local.Cool(cred, model, now, b)
	c.r.later(op{kind: opPublish, msg: c.r.replica + " c " + strconv.FormatUint(cred, 16) + " " + strconv.FormatUint(model, 16) + " " + strconv.FormatInt(until, 10)})
	return until
}

// Recover implements provider.Cooldowns and tells the other replicas.
func (c *Cooldowns) Recover(cred, model uint64) {
	c.local.Recover(cred, model)
	c.r.later(op{kind: opPublish, msg: c.r.replica + " r " + strconv.FormatUint(cred, 16) + " " + strconv.FormatUint(model, 16)})
}

// Forget implements provider.Cooldowns and tells the other replicas.
func (c *Cooldowns) Forget(cred uint64) {
	c.local.Forget(cred)
	c.r.later(op{kind: opPublish, msg: c.r.replica + " f " + strconv.FormatUint(cred, 16)})
}

// Latest is the end of cred's latest rest in the local table, for the
// management API (provider.RestUntil).
func (c *Cooldowns) Latest(cred uint64) int64 { return provider.RestUntil(c.local, cred) }

// apply takes another replica's broadcast into the local table.
func (c *Cooldowns) apply(kind string, cred, model uint64, until int64) {
	switch kind {
	case "r":
		c.local.Recover(cred, model)
		return
	case "f":
		c.local.Forget(cred)
		return
	}
	if now := time.Now().UnixNano(); until > now {
		c.local.Cool(cred, model, now, provider.Backoff{Base: time.Duration(until - now)})
	}
}

// subscribe receives the cooldown broadcasts until the store closes,
// resubscribing after a lost connection.
func (r *remote) subscribe(client rueidis.Client) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-r.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		for ctx.Err() == nil {
			err := client.Receive(ctx, client.B().Subscribe().Channel(r.key("cooldowns")).Build(), r.received)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				r.failed(err)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(pauseOnError):
			}
		}
	}()
}

// received applies one broadcast: "REPLICA c CRED MODEL UNTIL",
// "REPLICA r CRED MODEL" or "REPLICA f CRED" (hex ids, unix nanos).
func (r *remote) received(m rueidis.PubSubMessage) {
	f := strings.Fields(m.Message)
	if len(f) < 3 || f[0] == r.replica || f[1] != "f" && len(f) < 4 {
		return
	}
	cred, err1 := strconv.ParseUint(f[2], 16, 64)
	var model uint64
	var err2 error
	if f[1] != "f" {
		model, err2 = strconv.ParseUint(f[3], 16, 64)
	}
	if err1 != nil || err2 != nil {
		return
	}
	var until int64
	if f[1] == "c" && len(f) == 5 {
		until, _ = strconv.ParseInt(f[4], 10, 64)
	}
	r.mu.Lock()
	cools := r.cools
	r.mu.Unlock()
	for _, c := range cools {
		c.apply(f[1], cred, model, until)
	}
}
