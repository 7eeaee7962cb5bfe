// The shareable view of the viewer: zoom, centre, plane and colour-by, kept in the page URL's hash.
//
// `#zoom=5.25&x=42000&y=86500&c=1&colour=classification.name`: zoom is the pyramid's zoom (fractional between levels),
// x and y the centre in image pixels (y down), t/c/z the plane, colour the colour-by field (its whole name, dots and
// spaces included, percent-encoded); `hide=nucleus` once per layer unticked, `background=off` when the slide image is.
// The hash, not the query: `?tileset=` stays the page's own parameter and a hash change does not reload the page.

export const PLANE_DIMS = ['t', 'c', 'z'];

const finite = (s) => (s === null || s.trim() === '' ? undefined : Number.isFinite(Number(s)) ? Number(s) : undefined);

/** What a hash asks for; members absent or unreadable are left out, so the caller keeps its own defaults for them. */
export function readViewState(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const out = { plane: {} };
  const zoom = finite(p.get('zoom')), x = finite(p.get('x')), y = finite(p.get('y'));
  if (zoom !== undefined && x !== undefined && y !== undefined) out.view = { zoom, x, y };
  for (const d of PLANE_DIMS) {
    const v = finite(p.get(d));
    if (v !== undefined && Number.isInteger(v)) out.plane[d] = v;
  }
  if (p.get('colour')) out.colour = p.get('colour');
  const hide = p.getAll('hide').filter((id) => id !== '');
  if (hide.length > 0) out.hide = hide;
  if (p.get('background') === 'off') out.background = false;
  return out;
}

/** The hash of a view; the centre is rounded to about a tenth of a screen pixel (`resolution`: image pixels per one). */
export function writeViewState({ zoom, x, y, resolution, plane, dims, colour, hide = [], background = true }) {
  const p = new URLSearchParams();
  const digits = Math.max(0, Math.min(6, Math.ceil(-Math.log10(resolution / 10))));
  p.set('zoom', String(Math.round(zoom * 100) / 100));
  p.set('x', String(Number(x.toFixed(digits))));
  p.set('y', String(Number(y.toFixed(digits))));
  for (const d of dims) p.set(d, String(plane[d]));
  p.set('colour', colour);
  for (const id of [...hide].sort()) p.append('hide', id);
  if (!background) p.set('background', 'off');
  // URLSearchParams writes spaces as '+'; %20 reads the same and survives being pasted into more places.
  return `#${p.toString().replace(/\+/g, '%20')}`;
}
