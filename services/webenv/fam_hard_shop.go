package webenv

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// The hard tier's shop: search, filter, compare prices, add the cheapest
// matching item, check out with an address. Nine facts, about eleven steps,
// five kinds of pages.

func init() {
	register("shop-checkout", genShopCheckout)
}

var shopNouns = []string{"mouse", "keyboard", "lamp", "kettle", "backpack", "headphones", "mug", "notebook"}
var shopAdjectives = []string{"wireless", "compact", "steel", "classic", "travel", "ergonomic"}
var shopBrands = []string{"Acme", "Zenit", "Orbis", "Nova", "Kumo", "Vela"}

type shopItem struct {
	ID, Name, Brand, Adj, Noun string
	Cents                      int
}

func money(cents int) string { return fmt.Sprintf("$%d.%02d", cents/100, cents%100) }

// address is a shipping address of the generators.
type address struct{ Name, Street, City, Zip string }

func (g *gen) address() address {
	return address{
		Name:   g.Pick(firstNames) + " " + g.Pick(lastNames),
		Street: itoa(g.Range(2, 98)) + " " + g.Pick(streets) + " " + g.Pick(streetKinds),
		City:   g.Pick(cities),
		Zip:    g.Digits(5),
	}
}

func genShopCheckout(g *gen) {
	noun, adj, brand := g.Pick(shopNouns), g.Pick(shopAdjectives), g.Pick(shopBrands)
	var items []shopItem
	ids := map[string]bool{}
	add := func(b, a, n string, cents int) shopItem {
		id := g.Code(5)
		for ids[id] {
			id = g.Code(5)
		}
		ids[id] = true
		it := shopItem{ID: id, Brand: b, Adj: a, Noun: n, Cents: cents,
			Name: fmt.Sprintf("%s %s %s %s", b, title(a), title(n), g.Code(2))}
		items = append(items, it)
		return it
	}
	// The matching items: 2–3, one cheapest by at least a dollar.
	best := g.Range(1500, 6000)
	target := add(brand, adj, noun, best)
	for range g.Range(1, 2) {
		add(brand, adj, noun, best+g.Range(100, 3000))
	}
	// Cheaper decoys that do not match (other brand, or other kind).
	otherBrands := slices.DeleteFunc(slices.Clone(shopBrands), func(b string) bool { return b == brand })
	otherAdjs := slices.DeleteFunc(slices.Clone(shopAdjectives), func(a string) bool { return a == adj })
	add(g.Pick(otherBrands), adj, noun, best-g.Range(100, 1000))
	add(brand, g.Pick(otherAdjs), noun, best-g.Range(100, 1000))
	for range g.Range(3, 6) {
		add(g.Pick(otherBrands), g.Pick(shopAdjectives), noun, g.Range(900, 9000))
	}
	// Other kinds of things, for other searches.
	for _, n := range g.Sample(shopNouns, 4) {
		if n != noun {
			for range 3 {
				add(g.Pick(shopBrands), g.Pick(shopAdjectives), n, g.Range(900, 9000))
			}
		}
	}
	g.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	addr := g.address()
	g.instr(`Buy the cheapest %s %s from %s and ship it to %s, %s, %s %s.`, adj, noun, brand, addr.Name, addr.Street, addr.City, addr.Zip)
	byID := map[string]shopItem{}
	for _, it := range items {
		byID[it.ID] = it
	}
	searched := func(st *State, pred func(url.Values) bool) bool {
		for _, v := range st.Visits {
			if q, ok := strings.CutPrefix(v, "/search?"); ok {
				if vals, err := url.ParseQuery(q); err == nil && pred(vals) {
					return true
				}
			}
		}
		return false
	}
	g.fact(Fact{Name: "searched for " + noun, Group: "search", Check: func(st *State) bool {
		return searched(st, func(v url.Values) bool { return strings.Contains(strings.ToLower(v.Get("q")), noun) })
	}})
	g.fact(Fact{Name: "filtered by " + brand, Group: "search", Check: func(st *State) bool {
		return searched(st, func(v url.Values) bool { return v.Get("brand") == brand })
	}})
	g.fact(Fact{Name: "the cheapest " + adj + " " + noun + " from " + brand + " is in the cart", Group: "cart", Check: func(st *State) bool {
		return slices.Contains(st.Cart, target.ID)
	}})
	g.fact(Fact{Name: "nothing else is in the cart", Group: "cart", Check: func(st *State) bool {
		return len(st.Cart) == 1 && st.Cart[0] == target.ID
	}})
	g.fact(factEq("name is "+addr.Name, "address", "ship-name", addr.Name, true))
	g.fact(factEq("street is "+addr.Street, "address", "ship-street", addr.Street, true))
	g.fact(factEq("city is "+addr.City, "address", "ship-city", addr.City, true))
	g.fact(factEq("zip is "+addr.Zip, "address", "ship-zip", addr.Zip, false))
	g.fact(Fact{Name: "order placed", Group: "order", Check: func(st *State) bool { return st.Site["order"] == "placed" && st.Ended("place", "") }})
	g.plan("fill", "input"+sel("name", "q"), noun)
	g.plan("click", "button"+sel("data-go", "search"), "")
	g.plan("select", "select"+sel("name", "brand"), brand)
	g.plan("click", "button"+sel("data-go", "filter"), "")
	g.plan("click", "button"+sel("data-add", target.ID), "")
	g.plan("click", "a"+sel("data-go", "checkout"), "")
	g.plan("fill", "input"+sel("data-k", "ship-name"), addr.Name)
	g.plan("fill", "input"+sel("data-k", "ship-street"), addr.Street)
	g.plan("fill", "input"+sel("data-k", "ship-city"), addr.City)
	g.plan("fill", "input"+sel("data-k", "ship-zip"), addr.Zip)
	g.plan("click", "button"+sel("data-go", "place"), "")

	header := func(b *hb, req PageRequest) {
		b.f(`<div class="nav"><a href="%s/">%s Shop</a> <a href="%s/cart" data-go="cart">Cart (%d)</a></div>`,
			req.Base, esc(title(g.site.Name)), req.Base, len(req.State.Cart))
	}
	searchForm := func(b *hb, req PageRequest, q string) {
		b.f(`<form method="get" action="%s/search" class="row"><input type="text" name="q" value="%s" aria-label="search products" style="width:200px"> <button type="submit" data-go="search">%s</button></form>`,
			req.Base, esc(q), esc(g.site.SearchLabel))
	}
	checkoutForm := func(b *hb, req PageRequest, errs []string) {
		b.f(`<b>Checkout</b>`)
		for _, e := range errs {
			b.f(`<div class="err">%s</div>`, esc(e))
		}
		b.f(`<form method="post" action="%s/checkout/place">`, req.Base)
		for _, f := range [][2]string{{"Full name", "ship-name"}, {"Street", "ship-street"}, {"City", "ship-city"}, {"Zip code", "ship-zip"}} {
			b.f(`<div class="row"><label>%s<br><input type="text" name="%s" data-k="%s" value="%s" style="width:220px"></label></div>`,
				f[0], f[1], f[1], esc(req.State.Values[f[1]]))
		}
		b.f(`<button type="submit" data-go="place">Place order</button></form>`)
	}
	g.p.Pages = func(req PageRequest) PageResult {
		var b hb
		st := req.State
		path := strings.Trim(req.Path, "/")
		switch {
		case path == "" && req.Method == "GET":
			header(&b, req)
			searchForm(&b, req, "")
			b.f(`<div class="muted">Browse: `)
			for _, n := range shopNouns {
				b.f(`<a href="%s/search?q=%s">%s</a> `, req.Base, url.QueryEscape(n), esc(n))
			}
			b.f(`</div>`)
			return PageResult{HTML: b.String()}
		case path == "search" && req.Method == "GET":
			q := strings.ToLower(strings.TrimSpace(req.Query.Get("q")))
			fb := req.Query.Get("brand")
			header(&b, req)
			searchForm(&b, req, q)
			var hits []shopItem
			brands := map[string]bool{}
			words := strings.Fields(q)
			for _, it := range items {
				name := strings.ToLower(it.Name)
				ok := len(words) > 0
				for _, w := range words {
					ok = ok && strings.Contains(name, w)
				}
				if ok {
					brands[it.Brand] = true
					if fb == "" || fb == it.Brand {
						hits = append(hits, it)
					}
				}
			}
			b.f(`<form method="get" action="%s/search" class="row"><input type="hidden" name="q" value="%s">Brand <select name="brand"><option value="">All</option>`, req.Base, esc(q))
			for _, br := range shopBrands {
				if brands[br] {
					s := ""
					if br == fb {
						s = " selected"
					}
					b.f(`<option%s>%s</option>`, s, esc(br))
				}
			}
			b.f(`</select> <button type="submit" data-go="filter">Apply</button></form>`)
			if len(hits) == 0 {
				b.f(`<p class="muted">No products found.</p>`)
			}
			b.f(`<div data-lazy>`)
			for _, it := range hits {
				b.f(`<div class="card" data-item="%s"><b>%s</b> <span class="price">%s</span><form method="post" action="%s/cart/add" style="display:inline"><input type="hidden" name="item" value="%s"> <button type="submit" data-add="%s">Add to cart</button></form></div>`,
					it.ID, esc(it.Name), money(it.Cents), req.Base, it.ID, it.ID)
			}
			b.f(`</div>`)
			return PageResult{HTML: b.String()}
		case path == "cart/add" && req.Method == "POST":
			if _, ok := byID[req.Form.Get("item")]; ok && len(st.Cart) < 50 {
				st.Cart = append(st.Cart, req.Form.Get("item"))
			}
			return PageResult{Redirect: "/cart"}
		case path == "cart/remove" && req.Method == "POST":
			if i := slices.Index(st.Cart, req.Form.Get("item")); i >= 0 {
				st.Cart = slices.Delete(st.Cart, i, i+1)
			}
			return PageResult{Redirect: "/cart"}
		case path == "cart" && req.Method == "GET":
			header(&b, req)
			b.f(`<b>Your cart</b>`)
			total := 0
			for _, id := range st.Cart {
				it := byID[id]
				total += it.Cents
				b.f(`<div class="card">%s <span class="price">%s</span><form method="post" action="%s/cart/remove" style="display:inline"><input type="hidden" name="item" value="%s"> <button type="submit" data-remove="%s">Remove</button></form></div>`,
					esc(it.Name), money(it.Cents), req.Base, id, id)
			}
			if len(st.Cart) == 0 {
				b.f(`<p class="muted">Your cart is empty.</p>`)
			}
			b.f(`<div>Total: <span class="price">%s</span></div>`, money(total))
			b.f(`<div class="nav"><a href="%s/">Continue shopping</a> <a href="%s/checkout" data-go="checkout">Checkout</a></div>`, req.Base, req.Base)
			return PageResult{HTML: b.String()}
		case path == "checkout" && req.Method == "GET":
			header(&b, req)
			checkoutForm(&b, req, nil)
			return PageResult{HTML: b.String()}
		case path == "checkout/place" && req.Method == "POST":
			var errs []string
			if len(st.Cart) == 0 {
				errs = append(errs, "Your cart is empty.")
			}
			for _, f := range []string{"ship-name", "ship-street", "ship-city"} {
				if strings.TrimSpace(req.Form.Get(f)) == "" {
					errs = append(errs, "Fill in every field.")
					break
				}
			}
			if z := strings.TrimSpace(req.Form.Get("ship-zip")); len(z) < 4 || len(z) > 6 || strings.Trim(z, "0123456789") != "" {
				errs = append(errs, "The zip code is 4 to 6 digits.")
			}
			if len(errs) > 0 {
				header(&b, req)
				checkoutForm(&b, req, errs)
				return PageResult{HTML: b.String()}
			}
			st.Site["order"] = "placed"
			st.Site["order_items"] = strings.Join(st.Cart, ",")
			return PageResult{Redirect: "/done", End: true, EndKey: "place"}
		case path == "done" && req.Method == "GET":
			header(&b, req)
			if st.Site["order"] == "placed" {
				b.f(`<b>Thank you!</b><p>Your order is placed and ships to %s.</p>`, esc(st.Values["ship-city"]))
			} else {
				b.f(`<p class="muted">No order yet.</p>`)
			}
			return PageResult{HTML: b.String()}
		}
		return PageResult{NotFound: true}
	}
}
