package sqlrender

import (
	"fmt"

	"github.com/ddp-proxy/ddp-proxy/ir"
)

// RenderShape is q's shape read off a full rendering, as Measure computed
// it before it had a measuring mode, with the length of the text. It
// fails if the byte count the size limit reads is not the text's length.
func (d *Dialect) RenderShape(q *ir.BackendQuery) (Shape, int, error) {
	r, err := d.render(q)
	if r.n != r.b.Len() {
		return Shape{}, 0, fmt.Errorf("rendering counted %d bytes and wrote %d", r.n, r.b.Len())
	}
	if err != nil {
		return Shape{}, 0, err
	}
	return Shape{Params: len(r.args), Depth: r.max}, r.b.Len(), nil
}

// MeasureBytes is Measure with the byte count the measuring renderer
// reached.
func (d *Dialect) MeasureBytes(q *ir.BackendQuery) (Shape, int, error) {
	r := renderer{d: d, measure: true}
	if err := r.run(q); err != nil {
		return Shape{}, 0, err
	}
	return Shape{Params: r.nargs, Depth: r.max}, r.n, nil
}
