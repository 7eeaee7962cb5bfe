// Canvases read back pixel by pixel (OpenLayers' hit detection, which the hover card uses) are made for reading.
//
// OpenLayers 10 finds the features under the pointer by drawing them into a canvas of (2 × tolerance + 1)² px and
// reading it back, and first times such reads in canvases made with willReadFrequently true, false and unset, keeping
// the fastest: Chromium warned "Multiple readback operations using getImageData are faster with the
// willReadFrequently attribute" for the two others, and for the hit canvas whenever one of them won. OpenLayers has no
// option for it, so a 2D context of a canvas this small is asked for with willReadFrequently: the map's own canvases,
// drawn each frame and never read, keep the GPU.

/** The largest canvas (in pixels) taken for a readback canvas: a hit tolerance of 2 px gives 5 × 5. */
const READBACK_PIXELS = 64;

/** Makes small 2D contexts of `CanvasElement` (the page's HTMLCanvasElement) willReadFrequently; once per page. */
export function readSmallCanvasesOnCpu(CanvasElement) {
  const getContext = CanvasElement.prototype.getContext;
  if (getContext.readback) return;
  const patched = function (type, settings) {
    const small = type === '2d' && this.width * this.height <= READBACK_PIXELS;
    return getContext.call(this, type, small ? { ...settings, willReadFrequently: true } : settings);
  };
  patched.readback = true;
  CanvasElement.prototype.getContext = patched;
}
