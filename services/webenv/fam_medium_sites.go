package webenv

import (
	"hash/fnv"
	"net/url"
	"strings"
)

// Two small multi-page sites of the medium tier: menu navigation and
// search-then-open. Their pages are real page loads (links and GET forms), so
// the latency profile and go_back apply; visits are recorded on the server.

func init() {
	register("navigate-pages", genNavigatePages)
	register("search-open", genSearchOpen)
}

var sectionNames = []string{"Account", "Billing", "Settings", "Security", "Reports", "Team", "Help", "Projects"}
var subsectionNames = []string{"Overview", "Invoices", "Members", "Privacy", "Notifications", "Exports", "Limits", "Keys", "Devices", "History"}
var actionNames = []string{"Confirm", "Enable", "Archive", "Download", "Renew", "Verify", "Approve", "Reset"}

func genNavigatePages(g *gen) {
	secs := g.Sample(sectionNames, g.Range(3, 4))
	subs := map[string][]string{}
	acts := map[string]string{}
	for _, s := range secs {
		subs[s] = g.Sample(subsectionNames, g.Range(3, 4))
		for _, sub := range subs[s] {
			acts[s+"/"+sub] = g.Pick(actionNames)
		}
	}
	sec := g.Pick(secs)
	sub := g.Pick(subs[sec])
	act := acts[sec+"/"+sub]
	g.instr(`Go to %s › %s and click "%s".`, sec, sub, act)
	g.endOn("act")
	target := sec + "/" + sub
	g.fact(Fact{Name: "opened " + sec, Group: "navigate", Check: func(st *State) bool { return st.Visited("/s/" + slug(sec)) }})
	g.fact(Fact{Name: "opened " + sec + " › " + sub, Group: "navigate", Check: func(st *State) bool {
		return st.Visited("/s/" + slug(sec) + "/" + slug(sub))
	}})
	g.fact(Fact{Name: `clicked "` + act + `"`, Group: "act", Check: func(st *State) bool {
		return st.End != nil && st.End.K == "act" && strings.HasSuffix(st.End.V, ":"+act)
	}})
	g.fact(Fact{Name: "on the " + sec + " › " + sub + " page", Group: "act", Check: func(st *State) bool {
		return st.End != nil && st.End.K == "act" && strings.HasPrefix(st.End.V, target+":")
	}})
	g.plan("click", "a"+sel("data-nav", sec), "")
	g.plan("click", "a"+sel("data-nav", target), "")
	g.plan("click", "button"+sel("data-v", target+":"+act), "")
	g.p.Pages = func(req PageRequest) PageResult {
		var b hb
		crumbs := func(parts ...string) {
			b.f(`<div class="nav muted"><a href="%s/">Home</a>`, req.Base)
			for i, p := range parts {
				if i < len(parts)-1 {
					b.f(` › <a href="%s/s/%s">%s</a>`, req.Base, slug(p), esc(p))
				} else {
					b.f(` › %s`, esc(p))
				}
			}
			b.f(`</div>`)
		}
		path := strings.Trim(req.Path, "/")
		parts := strings.Split(path, "/")
		switch {
		case path == "":
			b.f(`<b>Dashboard</b><ul>`)
			for _, s := range secs {
				b.f(`<li><a href="%s/s/%s" data-nav="%s">%s</a></li>`, req.Base, slug(s), esc(s), esc(s))
			}
			b.f(`</ul>`)
			return PageResult{HTML: b.String()}
		case len(parts) == 2 && parts[0] == "s":
			s, ok := findBySlug(secs, parts[1])
			if !ok {
				return PageResult{NotFound: true}
			}
			crumbs(s)
			b.f(`<b>%s</b><ul data-lazy>`, esc(s))
			for _, x := range subs[s] {
				b.f(`<li><a href="%s/s/%s/%s" data-nav="%s">%s</a></li>`, req.Base, slug(s), slug(x), esc(s+"/"+x), esc(x))
			}
			b.f(`</ul>`)
			return PageResult{HTML: b.String()}
		case len(parts) == 3 && parts[0] == "s":
			s, ok1 := findBySlug(secs, parts[1])
			if !ok1 {
				return PageResult{NotFound: true}
			}
			x, ok2 := findBySlug(subs[s], parts[2])
			if !ok2 {
				return PageResult{NotFound: true}
			}
			crumbs(s, x)
			key := s + "/" + x
			b.f(`<b>%s</b><p class="muted">%s</p>`, esc(x), esc(pseudoText(key, 10)))
			b.f(`<button data-k="act" data-v="%s">%s</button> <button data-k="act" data-v="%s:Cancel">Cancel</button>`,
				esc(key+":"+acts[key]), esc(acts[key]), esc(key))
			return PageResult{HTML: b.String()}
		}
		return PageResult{NotFound: true}
	}
}

func findBySlug(xs []string, s string) (string, bool) {
	for _, x := range xs {
		if slug(x) == s {
			return x, true
		}
	}
	return "", false
}

// pseudoText is filler text that depends only on key.
func pseudoText(key string, n int) string {
	h := fnv.New64a()
	h.Write([]byte(key))
	r := newRNG("filler", key, int64(h.Sum64()>>1))
	return strings.Join(r.Sample(wordsCommon, n), " ")
}

var folders = []string{"Work", "Personal", "Later", "Travel", "Ideas"}
var titleShapes = []string{"Guide to %s %s", "%s and the %s", "The %s %s report", "How to fix a %s %s", "%s %s explained"}

func genSearchOpen(g *gen) {
	term := g.Pick(wordsCommon)
	type result struct{ id, title string }
	var results []result
	seen := map[string]bool{}
	for len(results) < g.Range(5, 7) {
		shape := g.Pick(titleShapes)
		t := strings.Replace(strings.Replace(shape, "%s", title(term), 1), "%s", g.Pick(wordsCommon), 1)
		if seen[t] {
			continue
		}
		seen[t] = true
		results = append(results, result{id: g.Code(4), title: t})
	}
	target := results[g.Intn(len(results))]
	folder := g.Pick(folders)
	g.instr(`Search for "%s", open "%s" and bookmark it in the folder %s.`, term, target.title, folder)
	g.endOn("bookmark")
	g.fact(Fact{Name: `searched for "` + term + `"`, Group: "search", Check: func(st *State) bool {
		for _, v := range st.Visits {
			if q, ok := strings.CutPrefix(v, "/search?"); ok {
				if vals, err := url.ParseQuery(q); err == nil && strings.EqualFold(strings.TrimSpace(vals.Get("q")), term) {
					return true
				}
			}
		}
		return false
	}})
	g.fact(Fact{Name: `opened "` + target.title + `"`, Group: "search", Check: func(st *State) bool { return st.Visited("/r/" + target.id) }})
	g.fact(factEq("folder is "+folder, "bookmark", "folder:"+target.id, folder, false))
	g.fact(factEnded("bookmarked it", "bookmark", "bookmark", target.id))
	g.plan("fill", "input"+sel("name", "q"), term)
	g.plan("click", "button"+sel("data-go", "search"), "")
	g.plan("click", "a"+sel("data-r", target.id), "")
	g.plan("select", "select"+sel("data-k", "folder:"+target.id), folder)
	g.plan("click", "button"+sel("data-k", "bookmark"), "")
	searchBox := func(b *hb, base, q string) {
		b.f(`<form method="get" action="%s/search" class="row"><input type="text" name="q" value="%s" aria-label="search" style="width:130px"> <button type="submit" data-go="search">%s</button></form>`,
			base, esc(q), esc(g.site.SearchLabel))
	}
	g.p.Pages = func(req PageRequest) PageResult {
		var b hb
		path := strings.Trim(req.Path, "/")
		switch {
		case path == "":
			b.f(`<b>%s</b>`, esc(title(g.site.Name)+" Search"))
			searchBox(&b, req.Base, "")
			return PageResult{HTML: b.String()}
		case path == "search":
			q := strings.TrimSpace(req.Query.Get("q"))
			searchBox(&b, req.Base, q)
			b.f(`<div data-lazy>`)
			if strings.EqualFold(q, term) {
				for _, r := range results {
					b.f(`<div class="card"><a href="%s/r/%s" data-r="%s">%s</a><div class="muted">%s</div></div>`,
						req.Base, r.id, r.id, esc(r.title), esc(pseudoText(r.id, 6)))
				}
			} else if q != "" {
				// Other queries find other pages, never the target.
				for i := range 3 {
					id := "x" + itoa(i)
					b.f(`<div class="card"><a href="%s/r/%s" data-r="%s">%s</a><div class="muted">%s</div></div>`,
						req.Base, id, id, esc(title(q)+" "+pseudoText(q+id, 1)), esc(pseudoText(q+id, 6)))
				}
			} else {
				b.f(`<p class="muted">Type something to search.</p>`)
			}
			b.f(`</div>`)
			return PageResult{HTML: b.String()}
		case strings.HasPrefix(path, "r/"):
			id := strings.TrimPrefix(path, "r/")
			t := ""
			for _, r := range results {
				if r.id == id {
					t = r.title
				}
			}
			if t == "" {
				if len(id) != 2 || id[0] != 'x' {
					return PageResult{NotFound: true}
				}
				t = "Result " + id
			}
			b.f(`<div class="nav muted"><a href="%s/">Home</a></div><b>%s</b><p class="muted">%s</p>`, req.Base, esc(t), esc(pseudoText(id, 12)))
			b.f(`<div class="row"><label>Folder <select data-k="folder:%s"><option value="">Choose…</option>`, esc(id))
			for _, f := range folders {
				b.f(`<option>%s</option>`, esc(f))
			}
			b.f(`</select></label></div><button data-k="bookmark" data-v="%s">Bookmark</button>`, esc(id))
			return PageResult{HTML: b.String()}
		}
		return PageResult{NotFound: true}
	}
}
