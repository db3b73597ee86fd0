package webenv

import (
	"slices"
	"strings"
)

// The hard tier's directory: find a person's manager across pages and
// report three details, by a form or a message to the user.

func init() {
	register("find-and-report", genFindAndReport)
}

// norm folds case and spaces, for comparing reported values.
func norm(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), "")) }

type person struct {
	ID, Name, Title, Dept, Phone, Email, Office, Manager string
}

func genFindAndReport(g *gen) {
	depts := g.Sample(departments, g.Range(4, 5))
	var people []person
	used := map[string]bool{}
	byID := map[string]person{}
	for _, d := range depts {
		n := g.Range(4, 6)
		var head string
		for i := range n {
			name := g.Pick(firstNames) + " " + g.Pick(lastNames)
			for used[name] {
				name = g.Pick(firstNames) + " " + g.Pick(lastNames)
			}
			used[name] = true
			first, last, _ := strings.Cut(name, " ")
			p := person{
				ID: g.Code(4), Name: name, Title: g.Pick(jobTitles), Dept: d,
				Phone:  "+1 555 " + g.Digits(4),
				Email:  strings.ToLower(first[:1]+last) + itoa(g.Range(1, 99)) + "@corp.test",
				Office: string(rune('A'+g.Intn(4))) + itoa(g.Range(1, 5)) + "-" + itoa(g.Range(10, 49)),
			}
			if i == 0 {
				p.Title, head = "Head of "+d, p.ID
			} else {
				p.Manager = head
			}
			people = append(people, p)
			byID[p.ID] = p
		}
	}
	var members []person
	for _, p := range people {
		if p.Manager != "" {
			members = append(members, p)
		}
	}
	x := members[g.Intn(len(members))]
	m := byID[x.Manager]
	g.instr(`Find the manager of %s (%s) and report the manager's phone, email and office.`, x.Name, x.Dept)
	g.endOn("report")
	g.p.MsgEnds = true
	reported := func(key, want string) func(*State) bool {
		return func(st *State) bool {
			return norm(st.Values[key]) == norm(want) || slices.ContainsFunc(st.Messages, func(msg string) bool {
				return strings.Contains(norm(msg), norm(want))
			})
		}
	}
	g.fact(Fact{Name: "opened " + x.Dept, Group: "find", Check: func(st *State) bool { return st.Visited("/d/" + slug(x.Dept)) }})
	g.fact(Fact{Name: "opened " + x.Name, Group: "find", Check: func(st *State) bool { return st.Visited("/p/" + x.ID) }})
	g.fact(Fact{Name: "opened the manager, " + m.Name, Group: "find", Check: func(st *State) bool { return st.Visited("/p/" + m.ID) }})
	g.fact(Fact{Name: "reported the phone " + m.Phone, Group: "report", Check: reported("rep-phone", m.Phone)})
	g.fact(Fact{Name: "reported the email " + m.Email, Group: "report", Check: reported("rep-email", m.Email)})
	g.fact(Fact{Name: "reported the office " + m.Office, Group: "report", Check: reported("rep-office", m.Office)})
	g.fact(Fact{Name: "submitted the report", Group: "report", Check: func(st *State) bool { return st.End != nil }})
	g.plan("click", "a"+sel("data-nav", x.Dept), "")
	g.plan("click", "a"+sel("data-p", x.ID), "")
	g.plan("click", "a"+sel("data-mgr", m.ID), "")
	g.plan("click", "a"+sel("data-go", "report"), "")
	g.plan("fill", "input"+sel("data-k", "rep-phone"), m.Phone)
	g.plan("fill", "input"+sel("data-k", "rep-email"), m.Email)
	g.plan("fill", "input"+sel("data-k", "rep-office"), m.Office)
	g.plan("click", "button"+sel("data-k", "report"), "")

	g.p.Pages = func(req PageRequest) PageResult {
		var b hb
		b.f(`<div class="nav"><a href="%s/">Directory</a> <a href="%s/report" data-go="report">Report</a></div>`, req.Base, req.Base)
		path := strings.Trim(req.Path, "/")
		switch {
		case path == "":
			b.f(`<b>Departments</b><ul>`)
			for _, d := range depts {
				b.f(`<li><a href="%s/d/%s" data-nav="%s">%s</a></li>`, req.Base, slug(d), esc(d), esc(d))
			}
			b.f(`</ul>`)
		case strings.HasPrefix(path, "d/"):
			d, ok := findBySlug(depts, strings.TrimPrefix(path, "d/"))
			if !ok {
				return PageResult{NotFound: true}
			}
			b.f(`<b>%s</b><table data-lazy>`, esc(d))
			for _, p := range people {
				if p.Dept == d {
					b.f(`<tr><td><a href="%s/p/%s" data-p="%s">%s</a></td><td class="muted">%s</td></tr>`, req.Base, p.ID, p.ID, esc(p.Name), esc(p.Title))
				}
			}
			b.f(`</table>`)
		case strings.HasPrefix(path, "p/"):
			p, ok := byID[strings.TrimPrefix(path, "p/")]
			if !ok {
				return PageResult{NotFound: true}
			}
			b.f(`<b>%s</b><div class="muted">%s, %s</div><table>`, esc(p.Name), esc(p.Title), esc(p.Dept))
			b.f(`<tr><th>Phone</th><td>%s</td></tr><tr><th>Email</th><td>%s</td></tr><tr><th>Office</th><td>%s</td></tr>`, esc(p.Phone), esc(p.Email), esc(p.Office))
			if mm, ok := byID[p.Manager]; ok {
				b.f(`<tr><th>Manager</th><td><a href="%s/p/%s" data-mgr="%s">%s</a></td></tr>`, req.Base, mm.ID, mm.ID, esc(mm.Name))
			} else {
				b.f(`<tr><th>Manager</th><td>—</td></tr>`)
			}
			b.f(`</table>`)
		case path == "report":
			b.f(`<b>Report</b>`)
			for _, f := range [][2]string{{"Phone", "rep-phone"}, {"Email", "rep-email"}, {"Office", "rep-office"}} {
				b.f(`<div class="row"><label>%s<br><input type="text" data-k="%s" style="width:200px"></label></div>`, f[0], f[1])
			}
			b.f(`<button data-k="report">%s</button>`, esc(g.site.SubmitLabel))
		default:
			return PageResult{NotFound: true}
		}
		return PageResult{HTML: b.String()}
	}
}
