package policy

import (
	"reflect"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// Every numeric array of Features is stacked, packed and counted by
// Bytes: a field added to Features and left out of arrays would come back
// from Unpack as nil.
func TestPackedCoversEveryArray(t *testing.T) {
	var f Features
	listed := map[uintptr]bool{}
	for _, a := range f.arrays() {
		listed[reflect.ValueOf(a).Pointer()] = true
	}
	v := reflect.ValueOf(&f).Elem()
	for i := range v.NumField() {
		k := v.Field(i).Type()
		if k.Kind() != reflect.Slice || (k.Elem().Kind() != reflect.Float32 && k.Elem().Kind() != reflect.Int64) {
			continue
		}
		if !listed[v.Field(i).Addr().Pointer()] {
			t.Errorf("Features.%s is not in arrays", v.Type().Field(i).Name)
		}
	}
	if a := DefaultArchitecture(); len(f.arrays()) != len(a.InputSpecs()) {
		t.Errorf("%d arrays for %d inputs", len(f.arrays()), len(a.InputSpecs()))
	}
}

// Unpack gives back exactly what was packed, for every golden page (with
// and without a frame), and the packed sample is smaller.
func TestPackedRoundTrip(t *testing.T) {
	var fs []*Features
	var ps []*Packed
	datadriven.Walk(t, "testdata/features", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			a, obs := goldenObservation(t, d)
			f, err := a.Featurize(obs)
			if err != nil {
				return d.Expected
			}
			want := *f
			p := Pack(f)
			got := p.Unpack()
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("%s: unpacked features differ from the packed ones", d.Pos)
			}
			if p.Bytes() >= f.Bytes() || p.Bytes() <= 0 {
				t.Errorf("%s: packed %d bytes, unpacked %d", d.Pos, p.Bytes(), f.Bytes())
			}
			// Unpacking twice gives separate sparse arrays: a batch may be
			// stacked while another holds the same sample.
			if again := p.Unpack(); len(again.PairFeats) > 0 && &again.PairFeats[0] == &got.PairFeats[0] {
				t.Errorf("%s: two unpacks share a sparse array", d.Pos)
			}
			if a.SameShapes(&defaultArch) {
				fs, ps = append(fs, f), append(ps, p)
			}
			return d.Expected
		})
	})
	if len(fs) < 2 {
		t.Fatalf("%d golden pages of the default shapes featurized", len(fs))
	}
	// A batch stacked from the packed samples is the batch of the
	// features they hold.
	want, err := defaultArch.Stack(fs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := defaultArch.StackPacked(ps)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Error("StackPacked's batch differs from Stack's")
	}
	if _, err := defaultArch.StackPacked(append(ps, nil)); err == nil {
		t.Error("a nil sample stacked")
	}
	short, sparse := *fs[0], *fs[0]
	short.Frame = short.Frame[:10]        // dense, too short
	sparse.PairFeats = make([]float32, 5) // packed sparse, the wrong length
	for _, f := range []*Features{&short, &sparse} {
		if _, err := defaultArch.StackPacked([]*Packed{ps[0], Pack(f)}); err == nil {
			t.Error("features of other shapes stacked")
		}
	}
}

var defaultArch = DefaultArchitecture()

func TestPackArray(t *testing.T) {
	for _, x := range [][]float32{nil, {}, {0, 0, 0}, {1, 0, 0, 0, 0, 2}, {1, 2, 3, 0}, {-0.5, 0.25}} {
		p := packArray(x)
		if got := p.unpack(); !reflect.DeepEqual(got, x) {
			t.Errorf("%v: unpacked %v", x, got)
		}
	}
	if p := packArray([]float32{0, 0, 0, 7}); p.dense != nil || p.bytes(4) != 8 {
		t.Errorf("a mostly zero array kept dense or counted %d bytes", p.bytes(4))
	}
	if p := packArray([]int64{3, 0, 4, 5}); p.dense == nil || p.bytes(8) != 32 {
		t.Errorf("a mostly set array packed or counted %d bytes", p.bytes(8))
	}
}
