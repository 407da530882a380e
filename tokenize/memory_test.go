package tokenize

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

const memChildEnv = "SLIPSTREAM_TOKENIZE_MEMORY_CHILD"

// TestMemory checks the heap an encoding adds on first use: o200k_base at
// most 5 MB in at most 16 objects, cl100k_base at most 2.5 MB. Each is
// measured in a fresh subprocess, so neither the other encoding nor the
// tiktoken-go oracle (24 MB) is in the measurement.
func TestMemory(t *testing.T) {
	f := func(name string, maxBytes, maxObjects int64) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$", "-test.v")
		cmd.Env = append(os.Environ(), memChildEnv+"="+name)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("cannot run memory child for %s: %s\n%s", name, err, out)
		}
		var heap, objects int64
		i := strings.Index(string(out), "heap=")
		if i < 0 {
			t.Fatalf("memory child printed no figures:\n%s", out)
		}
		if _, err := fmt.Sscanf(string(out[i:]), "heap=%d objects=%d", &heap, &objects); err != nil {
			t.Fatalf("cannot parse memory child output: %s\n%s", err, out)
		}
		t.Logf("%s first use: +%d bytes (%.2f MB), +%d heap objects", name, heap, float64(heap)/1e6, objects)
		if heap > maxBytes || objects > maxObjects {
			t.Fatalf("%s adds %d bytes in %d objects; budget %d bytes in %d objects",
				name, heap, objects, maxBytes, maxObjects)
		}
	}
	f("o200k_base", 5_000_000, 16)
	f("cl100k_base", 2_500_000, 16)
}

// TestMemoryChild runs only as TestMemory's subprocess.
func TestMemoryChild(t *testing.T) {
	name := os.Getenv(memChildEnv)
	if name == "" {
		t.Skip("runs only as TestMemory's subprocess")
	}
	e, err := Get(name)
	if err != nil {
		t.Fatal(err)
	}
	text := []byte("Hello, 世界! Привет, мир. func main() { fmt.Println(\"x\") } \t\n\t\nx 12345 " +
		strings.Repeat("ab", 200))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := e.Count(text)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(text)
	fmt.Printf("count=%d heap=%d objects=%d\n", n,
		int64(after.HeapAlloc)-int64(before.HeapAlloc),
		int64(after.HeapObjects)-int64(before.HeapObjects))
}
