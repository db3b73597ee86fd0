package webenv

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The hard tier's flight booking: search a route and a date, pick the
// cheapest flight, enter the passenger, confirm.

func init() {
	register("flight-booking", genFlightBooking)
}

type flight struct {
	ID, From, To, Date, Dep, Arr string
	Cents                        int
}

var seats = []string{"Window", "Aisle", "Middle"}

func genFlightBooking(g *gen) {
	cs := g.Sample(cities, 6)
	from, to := cs[0], cs[1]
	month := monthNames[g.Intn(12)]
	d0 := g.Range(1, 20)
	var dates []string
	for d := d0; d < d0+7; d++ {
		dates = append(dates, fmt.Sprintf("%d %s", d, month))
	}
	date := g.Pick(dates)
	slices.Sort(cs)
	flightsFor := func(f, t, d string) []flight {
		// Pages call this at request time: it must not touch g's stream.
		r := newRNG("flights/"+f+"/"+t+"/"+d, g.site.Name, g.p.Seed)
		var out []flight
		for range r.Range(3, 5) {
			h := r.Range(6, 20)
			dur := r.Range(1, 4)
			out = append(out, flight{
				ID: "F" + r.Code(3) + r.Digits(2), From: f, To: t, Date: d,
				Dep: fmt.Sprintf("%02d:%02d", h, 5*r.Intn(12)), Arr: fmt.Sprintf("%02d:%02d", (h+dur)%24, 5*r.Intn(12)),
				Cents: r.Range(60, 400) * 100,
			})
		}
		return out
	}
	targetFlights := flightsFor(from, to, date)
	cheapest := targetFlights[0]
	for _, f := range targetFlights[1:] {
		if f.Cents < cheapest.Cents {
			cheapest = f
		}
	}
	// Make the cheapest unique.
	for i := range targetFlights {
		if targetFlights[i].ID != cheapest.ID && targetFlights[i].Cents <= cheapest.Cents {
			targetFlights[i].Cents = cheapest.Cents + 1500
		}
	}
	first, last := g.Pick(firstNames), g.Pick(lastNames)
	pax := first + " " + last
	email := strings.ToLower(first) + "@" + g.Pick([]string{"mail.test", "post.test"})
	seat := g.Pick(seats)
	g.instr(`Book the cheapest flight from %s to %s on %s for %s (%s), %s seat.`, from, to, date, pax, email, strings.ToLower(seat))
	searchedWith := func(st *State, pred func(url.Values) bool) bool {
		for _, v := range st.Visits {
			if q, ok := strings.CutPrefix(v, "/flights?"); ok {
				if vals, err := url.ParseQuery(q); err == nil && pred(vals) {
					return true
				}
			}
		}
		return false
	}
	g.fact(Fact{Name: "searched " + from + " to " + to, Group: "search", Check: func(st *State) bool {
		return searchedWith(st, func(v url.Values) bool { return v.Get("from") == from && v.Get("to") == to })
	}})
	g.fact(Fact{Name: "searched on " + date, Group: "search", Check: func(st *State) bool {
		return searchedWith(st, func(v url.Values) bool { return v.Get("from") == from && v.Get("to") == to && v.Get("date") == date })
	}})
	g.fact(Fact{Name: "chose the cheapest flight, " + cheapest.ID, Group: "flight", Check: func(st *State) bool { return st.Site["flight"] == cheapest.ID }})
	g.fact(factEq("passenger is "+pax, "passenger", "pax-name", pax, true))
	g.fact(factEq("email is "+email, "passenger", "pax-email", email, true))
	g.fact(factEq("seat is "+seat, "passenger", "pax-seat", seat, false))
	g.fact(Fact{Name: "confirmed the booking", Group: "confirm", Check: func(st *State) bool { return st.Ended("confirm", "") }})
	g.plan("select", "select"+sel("name", "from"), from)
	g.plan("select", "select"+sel("name", "to"), to)
	g.plan("select", "select"+sel("name", "date"), date)
	g.plan("click", "button"+sel("data-go", "search"), "")
	g.plan("click", "button"+sel("data-flight", cheapest.ID), "")
	g.plan("fill", "input"+sel("data-k", "pax-name"), pax)
	g.plan("fill", "input"+sel("data-k", "pax-email"), email)
	g.plan("select", "select"+sel("data-k", "pax-seat"), seat)
	g.plan("click", "button"+sel("data-go", "confirm"), "")

	selectOf := func(b *hb, label, name string, opts []string, cur string) {
		b.f(`<div class="row"><label>%s <select name="%s"><option value="">Choose…</option>`, label, name)
		for _, o := range opts {
			s := ""
			if o == cur {
				s = " selected"
			}
			b.f(`<option%s>%s</option>`, s, esc(o))
		}
		b.f(`</select></label></div>`)
	}
	searchForm := func(b *hb, req PageRequest) {
		q := req.Query
		b.f(`<form method="get" action="%s/flights">`, req.Base)
		selectOf(b, "From", "from", cs, q.Get("from"))
		selectOf(b, "To", "to", cs, q.Get("to"))
		selectOf(b, "Date", "date", dates, q.Get("date"))
		b.f(`<button type="submit" data-go="search">%s</button></form>`, esc(g.site.SearchLabel))
	}
	passengerForm := func(b *hb, req PageRequest, errs []string) {
		f, ok := findFlight(targetFlights, req.State.Site["flight"])
		if !ok {
			f = flight{ID: req.State.Site["flight"]}
		}
		b.f(`<b>Passenger</b><div class="muted">Flight %s %s → %s, %s %s</div>`, esc(f.ID), esc(f.From), esc(f.To), esc(f.Date), esc(f.Dep))
		for _, e := range errs {
			b.f(`<div class="err">%s</div>`, esc(e))
		}
		b.f(`<form method="post" action="%s/book/confirm">`, req.Base)
		b.f(`<div class="row"><label>Full name<br><input type="text" name="pax-name" data-k="pax-name" style="width:200px"></label></div>`)
		b.f(`<div class="row"><label>Email<br><input type="text" name="pax-email" data-k="pax-email" style="width:200px"></label></div>`)
		b.f(`<div class="row"><label>Seat <select name="pax-seat" data-k="pax-seat"><option value="">Choose…</option>`)
		for _, s := range seats {
			b.f(`<option>%s</option>`, s)
		}
		b.f(`</select></label></div><button type="submit" data-go="confirm">Confirm booking</button></form>`)
	}
	g.p.Pages = func(req PageRequest) PageResult {
		var b hb
		st := req.State
		b.f(`<div class="nav"><a href="%s/">%s Air</a></div>`, req.Base, esc(title(g.site.Name)))
		path := strings.Trim(req.Path, "/")
		switch {
		case path == "" && req.Method == "GET":
			b.f(`<b>Find a flight</b>`)
			searchForm(&b, req)
		case path == "flights" && req.Method == "GET":
			searchForm(&b, req)
			f, t, d := req.Query.Get("from"), req.Query.Get("to"), req.Query.Get("date")
			if !slices.Contains(cs, f) || !slices.Contains(cs, t) || !slices.Contains(dates, d) || f == t {
				b.f(`<p class="err">Choose two different cities and a date.</p>`)
				break
			}
			fs := targetFlights
			if f != from || t != to || d != date {
				fs = flightsFor(f, t, d)
			}
			b.f(`<table data-lazy><tr><th>Flight</th><th>Departs</th><th>Arrives</th><th>Price</th><th></th></tr>`)
			for _, fl := range fs {
				b.f(`<tr><td>%s</td><td>%s</td><td>%s</td><td class="price">%s</td><td><form method="post" action="%s/book/start"><input type="hidden" name="flight" value="%s"><button type="submit" data-flight="%s">Select</button></form></td></tr>`,
					fl.ID, fl.Dep, fl.Arr, money(fl.Cents), req.Base, fl.ID, fl.ID)
			}
			b.f(`</table>`)
		case path == "book/start" && req.Method == "POST":
			st.Site["flight"] = truncate(req.Form.Get("flight"), 20)
			return PageResult{Redirect: "/passenger"}
		case path == "passenger" && req.Method == "GET":
			if st.Site["flight"] == "" {
				return PageResult{Redirect: "/"}
			}
			passengerForm(&b, req, nil)
		case path == "book/confirm" && req.Method == "POST":
			var errs []string
			if strings.TrimSpace(req.Form.Get("pax-name")) == "" {
				errs = append(errs, "Enter the passenger's name.")
			}
			if !emailRE.MatchString(strings.TrimSpace(req.Form.Get("pax-email"))) {
				errs = append(errs, "Enter a valid email.")
			}
			if req.Form.Get("pax-seat") == "" {
				errs = append(errs, "Choose a seat.")
			}
			if st.Site["flight"] == "" {
				errs = append(errs, "Choose a flight first.")
			}
			if len(errs) > 0 {
				passengerForm(&b, req, errs)
				break
			}
			st.Site["booked"] = st.Site["flight"]
			return PageResult{Redirect: "/done", End: true, EndKey: "confirm"}
		case path == "done" && req.Method == "GET":
			if st.Site["booked"] != "" {
				b.f(`<b>Booked!</b><p>Flight %s is confirmed.</p>`, esc(st.Site["booked"]))
			} else {
				b.f(`<p class="muted">Nothing booked yet.</p>`)
			}
		default:
			return PageResult{NotFound: true}
		}
		return PageResult{HTML: b.String()}
	}
}

func findFlight(fs []flight, id string) (flight, bool) {
	for _, f := range fs {
		if f.ID == id {
			return f, true
		}
	}
	return flight{}, false
}
