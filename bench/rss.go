package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// clockTick is the unit of utime/stime in /proc/<pid>/stat (USER_HZ, 100
// on every Linux we run on).
const clockTick = 10 * time.Millisecond

// Mem is one reading of /proc/<pid>/status, in bytes.
type Mem struct {
	RSS int64 // VmRSS: resident now
	HWM int64 // VmHWM: peak resident since the process started
	// Anon is RssAnon, the part of RSS no file backs: heap, stacks, the
	// runtime's own. The rest is mostly the binary's pages, which the
	// kernel keeps mapped once touched and can drop again from the page
	// cache at will.
	Anon int64
}

// ReadMem reads VmRSS, VmHWM and RssAnon of process pid (0 = this process).
func ReadMem(pid int) (Mem, error) {
	b, err := os.ReadFile(procPath(pid, "status"))
	if err != nil {
		return Mem{}, fmt.Errorf("cannot read process status: %w", err)
	}
	var m Mem
	m.RSS = statusKB(b, "VmRSS:") << 10
	m.HWM = statusKB(b, "VmHWM:") << 10
	m.Anon = statusKB(b, "RssAnon:") << 10
	if m.RSS == 0 {
		return m, fmt.Errorf("cannot find VmRSS in %s", procPath(pid, "status"))
	}
	return m, nil
}

// statusKB returns the kB figure on the line starting with key, or 0.
func statusKB(b []byte, key string) int64 {
	i := bytes.Index(b, []byte(key))
	if i < 0 {
		return 0
	}
	line := b[i+len(key):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	line = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))
	n, err := strconv.ParseInt(string(line), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// ReadCPU returns the user+system CPU time process pid (0 = this process)
// has used, from /proc/<pid>/stat (10 ms resolution).
func ReadCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(procPath(pid, "stat"))
	if err != nil {
		return 0, fmt.Errorf("cannot read process stat: %w", err)
	}
	return parseStatCPU(b)
}

// parseStatCPU extracts utime+stime (fields 14 and 15) from a stat line.
// The command name (field 2) may hold spaces and parens, so fields are
// counted after its last ')'.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("cannot parse process stat %q", clip(b))
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("cannot parse process stat %q", clip(b))
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("cannot parse utime/stime in %q", clip(b))
	}
	return time.Duration(u+s) * clockTick, nil
}

func procPath(pid int, file string) string {
	if pid == 0 {
		return "/proc/self/" + file
	}
	return "/proc/" + strconv.Itoa(pid) + "/" + file
}

// clip returns at most 80 bytes of b for error messages.
func clip(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

// Sampler polls a process's VmRSS at a fixed interval and keeps the peak;
// the kernel's VmHWM is read on Stop as a cross-check. Start and Stop
// must be called once each, in that order.
type Sampler struct {
	pid      int
	interval time.Duration
	stop     chan struct{}
	done     sync.WaitGroup
	peak     int64
	peakAnon int64
	last     Mem
	err      error
}

// NewSampler returns a sampler of pid polling every interval (default 20 ms).
func NewSampler(pid int, interval time.Duration) *Sampler {
	if interval <= 0 {
		interval = 20 * time.Millisecond
	}
	return &Sampler{pid: pid, interval: interval, stop: make(chan struct{})}
}

// Start begins polling in a goroutine.
func (s *Sampler) Start() {
	s.done.Add(1)
	go s.loop()
}

func (s *Sampler) loop() {
	defer s.done.Done()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		s.sample()
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

func (s *Sampler) sample() {
	m, err := ReadMem(s.pid)
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	s.last = m
	s.peak = max(s.peak, m.RSS)
	s.peakAnon = max(s.peakAnon, m.Anon)
}

// Stop ends polling and returns the peak VmRSS seen, the last reading
// (whose HWM is the kernel's peak over the process's life) and the first
// error met (e.g. the process died).
func (s *Sampler) Stop() (peak int64, last Mem, err error) {
	close(s.stop)
	s.done.Wait()
	s.sample()
	return s.peak, s.last, s.err
}

// PeakAnon returns the peak RssAnon seen; call it after Stop. The kernel
// keeps no high-water mark of it, so a peak between two samples is missed.
func (s *Sampler) PeakAnon() int64 { return s.peakAnon }
