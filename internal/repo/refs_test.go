package repo

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outside matches references to documents that are not in the
// repository: the planning notes beside it (and their sections) and tracker
// issue numbers. A
// clone has none of them, so code and docs cite the fact itself, a file
// in the repository, or a provider's public documentation instead. (The
// pattern is assembled so that this file does not match itself.)
var outside = regexp.MustCompile(`\.\./shared|` + `api-formats\.md|` + `responses-websocket\.md|` +
	`accounts\.md|` + `DESIGN\.md|STYLE\.md|` + `(?i:\bissue)` + ` [0-9]|` +
	// a section of the planning notes, cited as "(F" + ".6)" or "per F" + ".8"
	`(\(|, | per | of |[Tt]he )[A-H]` + `\.[0-9]{1,2}\b`)

// mdLink matches a relative Markdown link target.
var mdLink = regexp.MustCompile(`\]\(([^)#:\s]+)(#[^)]*)?\)`)

func trackedFiles(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", "../..", "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a git checkout)", err)
	}
	var files []string
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f == "" || strings.Contains(f, "/testdata/") || strings.HasPrefix(f, "e2e/node_modules") || strings.HasSuffix(f, "package-lock.json") {
			continue
		}
		files = append(files, f)
	}
	return files
}

// TestNoReferencesOutsideTheRepository greps every tracked text file.
func TestNoReferencesOutsideTheRepository(t *testing.T) {
	for _, f := range trackedFiles(t) {
		b, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil || bytes.IndexByte(b, 0) >= 0 {
			continue // gone from the work tree, or binary
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d: %q points outside the repository: %s", f, i+1, m, strings.TrimSpace(line))
			}
		}
	}
}

// TestMarkdownLinksResolve: every relative link in the repository's
// Markdown points at a file that exists inside it.
func TestMarkdownLinksResolve(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range trackedFiles(t) {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := filepath.Join(root, filepath.Dir(f), m[1])
			if rel, err := filepath.Rel(root, target); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: link %q leaves the repository", f, m[1])
				continue
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %q points at nothing", f, m[1])
			}
		}
	}
}
