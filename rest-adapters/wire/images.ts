import { z } from '@hono/zod-openapi';
import { imageHref, type Image } from '../../src/services/catalog/index.js';
import { IMAGE_CATEGORIES, IMAGE_SIZES, IMAGE_WIDTHS, textIn, type ImageSize, type Language } from '../../src/services/kernel/index.js';

/**
 * The one REST image object (docs/decisions.md, "Content and languages"), for every surface that
 * shows an image: property and room type content, v1 search items. Links are absolute and point
 * at the service's own public image route (GET /images/{propertyId}/{imageId}/{size}.png: no
 * credentials, as an <img> sends none), never at the provider.
 */

export const ImageLinkWire = z
  .object({
    href: z.string().openapi({
      description: "Absolute, on the service's public origin; no credentials needed",
      example: 'https://api.example.com/images/1/p1/medium.png',
    }),
    width: z.int().openapi({ description: 'Pixels', example: IMAGE_WIDTHS.medium }),
    height: z.int().openapi({ description: 'Pixels', example: Math.round((IMAGE_WIDTHS.medium * 2) / 3) }),
  })
  .openapi('ImageLink');

export const ImageWire = z
  .object({
    id: z.string().openapi({ description: 'Unique within its property', example: 'p1' }),
    category: z.enum(IMAGE_CATEGORIES),
    hero: z.boolean().openapi({ description: "The property's main image (one per property)" }),
    caption: z.string().openapi({ description: 'In the language served (Content-Language)' }),
    links: z
      .object(Object.fromEntries(IMAGE_SIZES.map((size) => [size, ImageLinkWire])) as Record<ImageSize, typeof ImageLinkWire>)
      .openapi({
        description: `One per size: ${IMAGE_SIZES.map((s) => `${s} ${IMAGE_WIDTHS[s]} px wide`).join(', ')}; height is two thirds of the width`,
      }),
  })
  .openapi('Image');

/** An image as the wire spells it: caption in `language`, links on `origin` (ctx.publicOrigin), one per advertised size. */
export function imageToWire(image: Image, language: Language, origin: string, propertyId: number): z.infer<typeof ImageWire> {
  const links = {} as Record<ImageSize, z.infer<typeof ImageLinkWire>>;
  for (const link of image.links) {
    links[link.size] = { href: imageHref(origin, propertyId, image.id, link.size), width: link.width, height: link.height };
  }
  return { id: image.id, category: image.category, hero: image.hero, caption: textIn(image.caption, language), links };
}
