package bench

import (
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	f := func(line string, want time.Duration, wantErr bool) {
		t.Helper()
		got, err := parseStatCPU([]byte(line))
		if (err != nil) != wantErr || got != want {
			t.Fatalf("parseStatCPU(%q) = %v, %v; want %v, err %v", line, got, err, want, wantErr)
		}
	}
	f("42 (slipstream) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 0 0", 3*time.Second, false)
	f("42 (a) b (c)) R 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 9 0 100 0 0", 100*time.Millisecond, false)
	f("42 (x) S 1 2", 0, true)
	f("garbage", 0, true)
}

func TestReadMemAndCPUOfSelf(t *testing.T) {
	m, err := ReadMem(0)
	if err != nil || m.RSS <= 0 || m.HWM < m.RSS || m.Anon <= 0 || m.Anon > m.RSS {
		t.Fatalf("ReadMem(self) = %+v, %v", m, err)
	}
	if _, err := ReadCPU(0); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMem(1 << 30); err == nil {
		t.Fatal("ReadMem of a missing pid must fail")
	}
	s := NewSampler(0, time.Millisecond)
	s.Start()
	time.Sleep(5 * time.Millisecond)
	peak, last, err := s.Stop()
	if err != nil || peak <= 0 || last.HWM <= 0 || s.PeakAnon() <= 0 || s.PeakAnon() > peak {
		t.Fatalf("sampler: peak %d last %+v err %v", peak, last, err)
	}
}
