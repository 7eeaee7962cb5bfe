// The preview painter: which pixels a feature takes, interiors by even-odd, and patches that add up to one canvas.
import { describe, expect, it } from 'vitest';
import { PreviewPainter, classColour, overBackground, placePatch, previewPixel, type PatchArea } from '../../src/raster/paint.js';
import { mulberry32 } from '../../src/random.js';

const RED = { r: 255, g: 0, b: 0 };
const rect = (x0: number, y0: number, x1: number, y1: number) => [x0, y0, x1, y0, x1, y1, x0, y1, x0, y0];
const alphaAt = (p: PreviewPainter, i: number, j: number) => p.rgba[(j * p.area.width + i) * 4 + 3];

describe('PreviewPainter', () => {
  it('marks the pixels an outline passes through and fills the centres inside, each once', () => {
    const p = new PreviewPainter({ x: 0, y: 0, width: 10, height: 10, pixel: 1 });
    p.begin(RED);
    p.polygon([rect(2.5, 2.5, 7.5, 7.5)]);
    p.end();
    for (let j = 0; j < 10; j++) {
      for (let i = 0; i < 10; i++) {
        const border = (i === 2 || i === 7) && j >= 2 && j <= 7 || (j === 2 || j === 7) && i >= 2 && i <= 7;
        const inside = i > 2 && i < 7 && j > 2 && j < 7;
        expect(alphaAt(p, i, j), `${i},${j}`).toBe(border ? 242 : inside ? 89 : 0);
      }
    }
    // Premultiplied: red carries the alpha, the other channels stay 0.
    expect([...p.rgba.subarray((2 * 10 + 2) * 4, (2 * 10 + 2) * 4 + 4)]).toEqual([242, 0, 0, 242]);
  });

  it('leaves holes empty (even-odd) and shows a shape smaller than a pixel as its pixel', () => {
    const p = new PreviewPainter({ x: 0, y: 0, width: 14, height: 14, pixel: 4 });
    p.begin(RED);
    p.polygon([rect(0, 0, 44, 44), rect(12, 12, 32, 32)]);
    p.end();
    expect(alphaAt(p, 5, 5)).toBe(0); // centre of the hole
    expect(alphaAt(p, 1, 1)).toBe(89); // between the rings
    p.begin(RED);
    p.polygon([rect(53.1, 53.1, 53.9, 53.9)]); // well inside pixel (13, 13), around no centre
    p.end();
    expect(alphaAt(p, 13, 13)).toBe(242);
  });

  it('paints points as discs and blends later features over earlier ones', () => {
    const p = new PreviewPainter({ x: 0, y: 0, width: 9, height: 9, pixel: 1 }, 1);
    p.begin(RED);
    p.points([4.5, 4.5]);
    p.end();
    const lit = [];
    for (let j = 0; j < 9; j++) for (let i = 0; i < 9; i++) if (alphaAt(p, i, j) > 0) lit.push(`${i},${j}`);
    expect(lit).toEqual(['3,3', '4,3', '5,3', '3,4', '4,4', '5,4', '3,5', '4,5', '5,5']);
    p.begin({ r: 0, g: 0, b: 255 });
    p.line([0, 4.5, 9, 4.5]);
    p.end();
    const o = (4 * 9 + 4) * 4;
    expect([...p.rgba.subarray(o, o + 4)]).toEqual([12, 0, 242, 254]);
    // Over a background, premultiplied colour plus what the alpha leaves of the background.
    expect([...overBackground(p.rgba.subarray(o, o + 4), 1, { r: 100, g: 100, b: 100 })]).toEqual([12, 0, 242]);
    expect([...overBackground(new Uint8Array([0, 0, 0, 0]), 1, new Uint8Array([1, 2, 3]))]).toEqual([1, 2, 3]);
  });

  it('gives the same bytes painted as patches, each with only the features meeting it, as on one canvas', () => {
    const random = mulberry32(7);
    const W = 96, H = 80, pixel = 4, plane = { w: W * pixel, h: H * pixel };
    type Shape = { kind: 'poly' | 'line' | 'point'; c: number[]; colour: { r: number; g: number; b: number } };
    const shapes: Shape[] = [];
    for (let k = 0; k < 300; k++) {
      const cx = random() * plane.w, cy = random() * plane.h, r = 1 + random() * 40;
      const kind = k % 5 === 0 ? 'line' : k % 7 === 0 ? 'point' : 'poly';
      const n = 3 + Math.floor(random() * 8), c: number[] = [];
      for (let i = 0; i < n; i++) { const a = (i / n) * 2 * Math.PI; c.push(cx + r * Math.cos(a) * (0.5 + random()), cy + r * Math.sin(a) * (0.5 + random())); }
      if (kind === 'poly') c.push(c[0], c[1]);
      shapes.push({ kind, c: kind === 'point' ? [cx, cy] : c, colour: classColour(`class ${k % 4}`) });
    }
    const paint = (p: PreviewPainter, s: Shape) => {
      p.begin(s.colour);
      if (s.kind === 'poly') p.polygon([s.c]); else if (s.kind === 'line') p.line(s.c); else p.points(s.c);
      p.end();
    };
    const whole = new PreviewPainter({ x: 0, y: 0, width: W, height: H, pixel }, 1);
    for (const s of shapes) paint(whole, s);
    const canvas = new Uint8Array(W * H * 4);
    const cell = 32; // patch side in preview pixels; the last row and column of patches are cut by the canvas
    for (let y = 0; y < H; y += cell) {
      for (let x = 0; x < W; x += cell) {
        const area: PatchArea = { x, y, width: cell, height: cell, pixel };
        const patch = new PreviewPainter(area, 1);
        // A feature meets the patch when its box, widened by the point disc, meets the patch's plane pixels.
        const reach = pixel * 2;
        for (const s of shapes) {
          const xs = s.c.filter((_, i) => i % 2 === 0), ys = s.c.filter((_, i) => i % 2 === 1);
          if (Math.max(...xs) + reach < x * pixel || Math.min(...xs) - reach >= (x + cell) * pixel) continue;
          if (Math.max(...ys) + reach < y * pixel || Math.min(...ys) - reach >= (y + cell) * pixel) continue;
          paint(patch, s);
        }
        placePatch(canvas, W, H, patch.rgba, area);
      }
    }
    expect(Buffer.compare(Buffer.from(canvas), Buffer.from(whole.rgba))).toBe(0);
    expect(whole.rgba.some((v) => v > 0)).toBe(true);
  });
});

describe('preview grid helpers', () => {
  it('picks the smallest power-of-two pixel that fits, and stable class colours', () => {
    expect([previewPixel(2048, 100, 2048), previewPixel(2049, 100, 2048), previewPixel(100_000, 80_000, 2048)]).toEqual([1, 2, 64]);
    expect(classColour('tumor')).toEqual(classColour('tumor'));
    expect(classColour('tumor')).not.toEqual(classColour('stroma'));
    expect(classColour(undefined)).toEqual({ r: 0x36, g: 0xd6, b: 0xe7 });
  });
});
