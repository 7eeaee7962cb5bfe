// Honesty at coarse zooms: which share of a layer's features the tiles of a zoom hold, from the descriptor.

/** A fraction as a percentage that never rounds to 0% or 100% when it is neither. */
export function percent(fraction) {
  const p = fraction * 100;
  if (p >= 99.5) return '>99%';
  if (p >= 10) return `${Math.round(p)}%`;
  if (p >= 1) return `${Number(p.toFixed(1))}%`;
  return `${Number(p.toPrecision(1))}%`;
}

/**
 * One line per shown layer thinned at zoom `zoom`: the layer's foreign member `kept_fraction` ({ "<zoom>": 0..1 })
 * names the zooms where the build kept only a share of its features (absent zooms kept everything).
 */
export function keptLines(layers, zoom, hidden) {
  const out = [];
  for (const l of layers) {
    const f = l.kept_fraction?.[String(zoom)];
    if (hidden.has(l.id) || typeof f !== 'number' || !(f >= 0 && f < 1)) continue;
    out.push(`showing ${percent(f)} of layer ${l.id} at this zoom; zoom in for more`);
  }
  return out;
}
