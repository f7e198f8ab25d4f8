/**
 * The simulator's images: every image a property advertises, at every size it advertises, drawn on
 * the fly as a PNG of exactly the advertised width and height (no file ships, nothing downloads).
 * The picture is deterministic: a sky-to-ground gradient in the colours of its category, a few
 * shapes placed by a stream seeded from the property, the image id and the category, and a band of
 * marks that differs per size. Encoded images are kept in a small LRU bounded in bytes.
 */

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { PNG } from 'pngjs';
import { IMAGE_SIZES, IMAGE_WIDTHS, type ImageCategory, type ImageSize } from '../services/kernel/index.js';
import { imageHeight, type Image } from './content.js';
import { hash, prng, type Property } from './dataset.js';

export interface EncodedImage {
  readonly bytes: Buffer;
  /** Strong: a digest of the bytes. */
  readonly etag: string;
}

/** Bytes of encoded images kept (least recently used dropped first). */
export const IMAGE_CACHE_BYTES = 32 * 1024 * 1024;

type Rgb = readonly [number, number, number];

/** Top and bottom colours and the shapes' colour of each category. */
const PALETTES: Record<ImageCategory, { top: Rgb; bottom: Rgb; shape: Rgb }> = {
  exterior: { top: [120, 170, 230], bottom: [200, 220, 240], shape: [90, 95, 110] },
  lobby: { top: [190, 160, 120], bottom: [240, 225, 200], shape: [140, 100, 60] },
  room: { top: [235, 225, 205], bottom: [200, 180, 150], shape: [250, 250, 245] },
  bathroom: { top: [225, 235, 240], bottom: [160, 200, 205], shape: [255, 255, 255] },
  dining: { top: [150, 80, 40], bottom: [230, 170, 100], shape: [250, 235, 210] },
  pool: { top: [110, 190, 240], bottom: [30, 150, 190], shape: [240, 240, 230] },
  fitness: { top: [70, 70, 80], bottom: [150, 150, 160], shape: [200, 40, 40] },
  spa: { top: [200, 225, 200], bottom: [100, 150, 110], shape: [245, 240, 225] },
  view: { top: [250, 180, 120], bottom: [90, 110, 160], shape: [40, 60, 70] },
};

const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : Math.round(v));

/**
 * Draws one image at one size: width IMAGE_WIDTHS[size], height imageHeight(size), RGB, 8 bits.
 * The same (propertyId, image, size) always gives the same bytes.
 */
export function renderImage(propertyId: number, image: Pick<Image, 'id' | 'category'>, size: ImageSize): Buffer {
  const width = IMAGE_WIDTHS[size];
  const height = imageHeight(size);
  const random = prng(hash('image', propertyId, image.id, image.category));
  const palette = PALETTES[image.category];
  // A tint of the image's own, so two images of a category differ.
  const tint: Rgb = [(random() - 0.5) * 60, (random() - 0.5) * 60, (random() - 0.5) * 60];
  const data = Buffer.alloc(width * height * 3);

  // The gradient, a row at a time.
  for (let y = 0; y < height; y++) {
    const f = y / (height - 1);
    const r = clamp(palette.top[0] + (palette.bottom[0] - palette.top[0]) * f + tint[0]);
    const g = clamp(palette.top[1] + (palette.bottom[1] - palette.top[1]) * f + tint[1]);
    const b = clamp(palette.top[2] + (palette.bottom[2] - palette.top[2]) * f + tint[2]);
    const row = y * width * 3;
    for (let x = 0; x < width; x++) {
      const i = row + x * 3;
      data[i] = r;
      data[i + 1] = g;
      data[i + 2] = b;
    }
  }

  const fill = (x0: number, y0: number, x1: number, y1: number, color: Rgb) => {
    const xa = Math.max(0, Math.floor(x0));
    const xb = Math.min(width, Math.ceil(x1));
    const ya = Math.max(0, Math.floor(y0));
    const yb = Math.min(height, Math.ceil(y1));
    for (let y = ya; y < yb; y++) {
      for (let x = xa; x < xb; x++) {
        const i = (y * width + x) * 3;
        data[i] = color[0];
        data[i + 1] = color[1];
        data[i + 2] = color[2];
      }
    }
  };
  const disc = (cx: number, cy: number, radius: number, color: Rgb) => {
    for (let y = Math.max(0, Math.floor(cy - radius)); y < Math.min(height, Math.ceil(cy + radius)); y++) {
      const half = Math.sqrt(Math.max(0, radius * radius - (y - cy) * (y - cy)));
      fill(cx - half, y, cx + half, y + 1, color);
    }
  };

  // Shapes in relative coordinates, so every size shows the same picture.
  const shade = (k: number): Rgb => [clamp(palette.shape[0] * k), clamp(palette.shape[1] * k), clamp(palette.shape[2] * k)];
  disc(width * (0.15 + random() * 0.7), height * (0.12 + random() * 0.2), height * (0.06 + random() * 0.06), [255, 240, 190]);
  const blocks = 3 + Math.floor(random() * 5);
  for (let k = 0; k < blocks; k++) {
    const x = random() * width;
    const w = width * (0.06 + random() * 0.14);
    const top = height * (0.35 + random() * 0.4);
    fill(x, top, x + w, height * 0.92, shade(0.75 + random() * 0.4));
  }

  // The size's band: one mark per size up to this one, so each size's bytes differ visibly.
  const band = Math.max(4, Math.round(height * 0.04));
  fill(0, height - band, width, height, shade(0.4));
  const sizeIndex = IMAGE_SIZES.indexOf(size);
  for (let k = 0; k <= sizeIndex; k++) fill(band * (1 + 2 * k), height - band * 0.8, band * (2 + 2 * k), height - band * 0.2, [255, 255, 255]);

  const png = new PNG({ width, height, colorType: 2, inputColorType: 2, inputHasAlpha: false, bitDepth: 8 });
  png.data = data;
  // Runs of one colour along a row: the `sub` filter turns them into zeros, which deflate well even at level 1.
  return PNG.sync.write(png, { colorType: 2, inputColorType: 2, inputHasAlpha: false, filterType: 1, deflateLevel: 1 });
}

/** The image of a property with this id (its own or a room type's), or undefined. */
export function findImage(property: Property, imageId: string): Image | undefined {
  return property.images.find((i) => i.id === imageId) ?? property.roomTypes.flatMap((r) => r.images).find((i) => i.id === imageId);
}

export function isImageSize(value: string): value is ImageSize {
  return (IMAGE_SIZES as readonly string[]).includes(value);
}

/** Encoded images by property, image and size, bounded in bytes. */
export class ImageStore {
  private readonly cache = new LRUCache<string, EncodedImage>({
    maxSize: IMAGE_CACHE_BYTES,
    sizeCalculation: (image) => image.bytes.length + 64,
  });

  get(propertyId: number, image: Image, size: ImageSize): EncodedImage {
    const key = `${propertyId}|${image.id}|${image.category}|${size}`;
    let encoded = this.cache.get(key);
    if (!encoded) {
      const bytes = renderImage(propertyId, image, size);
      encoded = { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
      this.cache.set(key, encoded);
    }
    return encoded;
  }

  clear(): void {
    this.cache.clear();
  }
}
