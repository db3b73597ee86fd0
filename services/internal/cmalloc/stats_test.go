package cmalloc

import "testing"

// A block malloc'd and not freed is in use; freed, it is not.
func TestReadCountsABlock(t *testing.T) {
	const n = 8 << 20 // above the mmap threshold: mmapped, counted exactly
	before := Read()
	p := allocate(n)
	during := Read()
	release(p)
	after := Read()
	if during.InUse < before.InUse+n {
		t.Errorf("in use %d with the block, %d before: want %d more", during.InUse, before.InUse, n)
	}
	if after.InUse+n > during.InUse {
		t.Errorf("in use %d after freeing it, %d with it", after.InUse, during.InUse)
	}
}
