package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "stub:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  stub apply -in FILE [-zip ZIP] -out FILE -list LIST -reason TEXT
  stub find  -src FILE -diag FILE
  stub extract -zip ZIP -sum h1:HASH -out DIR`

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "apply":
		return runApply(args[1:])
	case "find":
		return runFind(args[1:], stdout)
	case "extract":
		return runExtract(args[1:])
	default:
		return fmt.Errorf("unknown subcommand %q\n%s", args[0], usage)
	}
}

func runApply(args []string) error {
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	in := fs.String("in", "", "generated wrappers to read (a path, or an entry name inside -zip)")
	zipPath := fs.String("zip", "", "module zip to read -in from, so the input is always the pristine, go.sum-verified file")
	out := fs.String("out", "", "file to write (replaced atomically)")
	list := fs.String("list", "", "file with one C function name per line; # starts a comment")
	reason := fs.String("reason", "not available in the installed libtorch", "text after the function name in the error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *in == "" || *out == "" || *list == "" {
		return errors.New("apply needs -in, -out and -list")
	}
	src, err := readInput(*zipPath, *in)
	if err != nil {
		return err
	}
	names, err := readList(*list)
	if err != nil {
		return err
	}
	stubbed, err := applyStubs(string(src), names, *reason)
	if err != nil {
		return err
	}
	return writeAtomic(*out, []byte(stubbed))
}

func runFind(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("find", flag.ContinueOnError)
	srcPath := fs.String("src", "", "the generated wrappers that were compiled")
	diagPath := fs.String("diag", "", "output of g++ -w -fdiagnostics-plain-output")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *srcPath == "" || *diagPath == "" {
		return errors.New("find needs -src and -diag")
	}
	src, err := os.ReadFile(*srcPath)
	if err != nil {
		return fmt.Errorf("unable to read wrappers: %w", err)
	}
	diag, err := os.ReadFile(*diagPath)
	if err != nil {
		return fmt.Errorf("unable to read diagnostics: %w", err)
	}
	names, err := findFailing(string(src), string(diag), *srcPath)
	if err != nil {
		return err
	}
	for _, n := range names {
		fmt.Fprintln(stdout, n)
	}
	return nil
}

// readInput reads name from the file system, or from inside zipPath when set.
// Module zips name entries "module@version/path", so name may be the path
// alone; it matches the one entry ending in "/"+name.
func readInput(zipPath, name string) ([]byte, error) {
	if zipPath == "" {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("unable to read wrappers: %w", err)
		}
		return b, nil
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, fmt.Errorf("unable to open module zip: %w", err)
	}
	defer zr.Close()
	var match *zip.File
	for _, f := range zr.File {
		if f.Name == name || strings.HasSuffix(f.Name, "/"+name) {
			if match != nil {
				return nil, fmt.Errorf("unable to read %s from %s: more than one entry matches", name, zipPath)
			}
			match = f
		}
	}
	if match == nil {
		return nil, fmt.Errorf("unable to read %s from %s: no such entry", name, zipPath)
	}
	rc, err := match.Open()
	if err != nil {
		return nil, fmt.Errorf("unable to open %s in module zip: %w", match.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("unable to read %s in module zip: %w", match.Name, err)
	}
	return b, nil
}

// readList returns the sorted, de-duplicated names in a stub list.
func readList(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to read stub list: %w", err)
	}
	seen := map[string]bool{}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.ContainsAny(line, " \t") || !strings.HasPrefix(line, "atg_") {
			return nil, fmt.Errorf("unable to read stub list %s:%d: %q is not one atg_ function name", path, n, line)
		}
		if !seen[line] {
			seen[line] = true
			names = append(names, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("unable to read stub list: %w", err)
	}
	sort.Strings(names)
	return names, nil
}

// writeAtomic replaces path so that a build running concurrently never sees
// a half-written file. The new file gets path's old mode, or 0644.
func writeAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".stub-*")
	if err != nil {
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), mode); err != nil {
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("unable to write %s: %w", path, err)
	}
	return nil
}
