package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// runExtract unpacks a module zip into a directory of its own after checking
// the zip against a pinned go.sum hash. The build uses that copy through a
// replace directive, so go.sum no longer covers gotch: the pin in
// infra/gotch/common.sh is what keeps the source verified.
func runExtract(args []string) error {
	fs := flag.NewFlagSet("extract", flag.ContinueOnError)
	zipPath := fs.String("zip", "", "module zip (as go mod download leaves it)")
	sum := fs.String("sum", "", "expected go.sum hash of the zip (h1:...)")
	out := fs.String("out", "", "directory to create; must not exist")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *zipPath == "" || *sum == "" || *out == "" {
		return errors.New("extract needs -zip, -sum and -out")
	}
	zr, err := zip.OpenReader(*zipPath)
	if err != nil {
		return fmt.Errorf("unable to open module zip: %w", err)
	}
	defer zr.Close()
	got, err := hashZip(&zr.Reader)
	if err != nil {
		return err
	}
	if got != *sum {
		return fmt.Errorf("unable to extract %s: its hash is %s, want %s", *zipPath, got, *sum)
	}
	return extractZip(&zr.Reader, *out)
}

// hashZip is go.sum's h1 hash of a module zip (golang.org/x/mod's
// dirhash.Hash1 over the zip's entries): the sha256 of the sorted lines
// "<sha256 of file>  <name>\n", base64-encoded.
func hashZip(zr *zip.Reader) (string, error) {
	files := append([]*zip.File(nil), zr.File...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	summary := sha256.New()
	for _, f := range files {
		if strings.Contains(f.Name, "\n") {
			return "", fmt.Errorf("unable to hash module zip: entry name %q has a newline", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return "", fmt.Errorf("unable to hash %s: %w", f.Name, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, rc)
		rc.Close()
		if err != nil {
			return "", fmt.Errorf("unable to hash %s: %w", f.Name, err)
		}
		fmt.Fprintf(summary, "%x  %s\n", h.Sum(nil), f.Name)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(summary.Sum(nil)), nil
}

// extractZip writes every entry of a module zip ("module@version/path")
// under dir/path.
func extractZip(zr *zip.Reader, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return fmt.Errorf("unable to extract into %s: it exists", dir)
	}
	for _, f := range zr.File {
		// The prefix ends at the first '/' after the '@' of the version
		// (a module path has slashes of its own).
		at := strings.IndexByte(f.Name, '@')
		if at < 0 {
			return fmt.Errorf("unable to extract %s: not a module zip entry (no module@version/)", f.Name)
		}
		_, rel, ok := strings.Cut(f.Name[at:], "/")
		if !ok || rel == "" || strings.HasSuffix(f.Name, "/") {
			continue
		}
		// Module zips never hold ".." (go refuses them); a crafted one must
		// not write outside dir either.
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("unable to extract %s: path leaves the module", f.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("unable to extract %s: %w", f.Name, err)
		}
		if err := extractFile(f, dst); err != nil {
			return err
		}
	}
	return nil
}

func extractFile(f *zip.File, dst string) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("unable to extract %s: %w", f.Name, err)
	}
	defer rc.Close()
	w, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("unable to extract %s: %w", f.Name, err)
	}
	if _, err := io.Copy(w, rc); err != nil {
		w.Close()
		return fmt.Errorf("unable to extract %s: %w", f.Name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("unable to extract %s: %w", f.Name, err)
	}
	return nil
}
