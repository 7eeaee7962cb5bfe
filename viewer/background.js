// The slide image under the features (a descriptor asset of role `background`) and the panel's checkbox for it.

/**
 * The background layer: a downsampled image of the slide, never a drawing of the vectors (role `raster`). `show()`
 * takes the image of the plane shown (`plane`, read at each call), or the first; `shown()` says whether one is on
 * screen; `onToggle(f)` calls f once the checkbox has turned it on or off.
 */
export function backgroundOf(ol, { assets, dims, plane, base, worldExtent, projection, box, row }) {
  const images = (assets ?? []).filter((a) => a && a.role === 'background' && typeof a.href === 'string');
  const layer = new ol.layer.Image({ visible: images.length > 0 && box.checked });
  const forPlane = () => images.find((a) => dims.every((d) => a[d] === undefined || a[d] === plane[d])) ?? images[0];
  const show = () => {
    const a = forPlane();
    if (!a) return;
    const e = Array.isArray(a.bbox) && a.bbox.length === 4 ? [a.bbox[0], -a.bbox[3], a.bbox[2], -a.bbox[1]] : worldExtent;
    layer.setSource(new ol.source.ImageStatic({ url: new URL(a.href, base).href, imageExtent: e, projection }));
  };
  const toggled = [];
  if (images.length) {
    row.hidden = false;
    box.addEventListener('change', () => {
      layer.setVisible(box.checked);
      for (const f of toggled) f();
    });
  }
  show();
  return { layer, show, shown: () => layer.getVisible(), onToggle: (f) => toggled.push(f) };
}
