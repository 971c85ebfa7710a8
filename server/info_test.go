package server

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/bloomlab/bloomlab/internal/redistest"
)

// infoHeaders returns the section names of an INFO answer, in order.
func infoHeaders(txt string) []string {
	var h []string
	for _, line := range strings.Split(txt, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "# "); ok {
			h = append(h, name)
		}
	}
	return h
}

// infoSections reads testdata/info_sections_7.0.15.txt: INFO's arguments
// and the section headers redis-server 7.0.15 answers them with.
func infoSections(t *testing.T) (args []string, want map[string]string) {
	f, err := os.Open("testdata/info_sections_7.0.15.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		a, h, _ := strings.Cut(sc.Text(), ":")
		args = append(args, a)
		want[a] = h
	}
	return args, want
}

// TestInfoSections: INFO, INFO default/all/everything and single
// sections give the sections redis-server 7.0.15 gives, in its order.
// redis-py's test harness reads cluster_enabled from INFO at start and
// stopped with KeyError when the Cluster section was missing.
func TestInfoSections(t *testing.T) {
	args, want := infoSections(t)
	c := dial(t, start(t, Config{}))
	for _, a := range args {
		c.send(append([]string{"INFO"}, strings.Fields(a)...)...)
		v, _ := c.read()
		if got := strings.Join(infoHeaders(string(v.Str)), " "); got != want[a] {
			t.Errorf("INFO %s: sections %q, redis-server 7.0.15 gives %q", a, got, want[a])
		}
	}
	for _, a := range []string{"cluster", "default", "everything"} {
		c.send("INFO", a)
		v, _ := c.read()
		if !strings.Contains(string(v.Str), "# Cluster\r\ncluster_enabled:0\r\n") {
			t.Errorf("INFO %s has no cluster_enabled:0:\n%s", a, v.Str)
		}
	}
	c.send("INFO", "replication")
	if v, _ := c.read(); !strings.HasPrefix(string(v.Str), "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n") {
		t.Errorf("INFO replication:\n%s", v.Str)
	}
	c.send("INFO", "cpu")
	if v, _ := c.read(); !strings.Contains(string(v.Str), "used_cpu_user:") {
		t.Errorf("INFO cpu:\n%s", v.Str)
	}
}

// TestInfoSectionsLive checks the recorded headers against a running
// redis-server, when one is installed.
func TestInfoSectionsLive(t *testing.T) {
	args, want := infoSections(t)
	r := redistest.Start(t, redistest.Options{})
	rc := r.Client("")
	ctx := context.Background()
	for _, a := range args {
		txt, err := rc.Info(ctx, strings.Fields(a)...).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(infoHeaders(txt), " "); got != want[a] {
			t.Errorf("redis-server, INFO %s: sections %q, recorded %q", a, got, want[a])
		}
	}
}
