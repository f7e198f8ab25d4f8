import { GraphQLDirective, GraphQLEnumType, GraphQLNonNull, GraphQLSchema, DirectiveLocation } from 'graphql';
import { imageHref, type Amenity, type Image, type ImageLink } from '../services/catalog/index.js';
import {
  AMENITY_GROUPS,
  DEFAULT_LANGUAGE,
  IMAGE_CATEGORIES,
  IMAGE_SIZES,
  IMAGE_WIDTHS,
  LANGUAGES,
  ROOM_VIEWS,
  textIn,
  type ImageSize as ImageSizeValue,
  type LocalizedText,
} from '../services/kernel/index.js';
import type { RequestContext } from '../context.js';
import { WHOLE_LIST } from '../graphql/costField.js';
import { builder } from './builder.js';
import { serviceEnum } from './enums.js';

/**
 * Content shared by properties, room types and rate plans (docs/decisions.md, "Content and
 * languages"): the languages, amenities and images, and the operation directive that chooses the
 * language of a document.
 *
 * Texts are plain strings in the operation's language (ctx.language): the one `@inContext(language:)`
 * names, else the one the request's `Accept-Language` prefers, else ko-KR. A text the provider has
 * not translated is served in ko-KR, field by field (textIn), never as an empty string.
 *
 * Lists of content (amenities, images, links, views, age categories) come whole with the object
 * that holds them: the cost rules count them as part of it (WHOLE_LIST), not as lists of 10.
 */

export const Language = serviceEnum(
  'Language',
  LANGUAGES,
  `A language content is served in (BCP 47: KO_KR is ko-KR). ${DEFAULT_LANGUAGE} is the default and the fallback of every text`,
);
export const AmenityGroup = serviceEnum('AmenityGroup', AMENITY_GROUPS, 'What an amenity is about, for grouping them on a page');
export const ImageCategory = serviceEnum('ImageCategory', IMAGE_CATEGORIES, 'What an image shows');
export const ImageSize = serviceEnum(
  'ImageSize',
  IMAGE_SIZES,
  `The sizes every image is served at, 3:2: ${IMAGE_SIZES.map((s) => `${s.toUpperCase()} ${IMAGE_WIDTHS[s]} × ${Math.round((IMAGE_WIDTHS[s] * 2) / 3)}`).join(', ')} pixels`,
);
export const RoomView = serviceEnum('RoomView', ROOM_VIEWS, "What a room's windows look onto");

/** The field extension of a content list: it comes whole with its parent (src/graphql/cost.ts). */
export const wholeList = { [WHOLE_LIST]: true } as const;

/** A text of the model in the operation's language, falling back to ko-KR (never empty). */
export function localized<T>(text: (parent: T) => LocalizedText) {
  return (parent: T, _args: unknown, ctx: RequestContext) => textIn(text(parent), ctx.language);
}

/** The name of the directive that sets the language of an operation. */
export const IN_CONTEXT = 'inContext';

/**
 * `@inContext(language: Language!)` on an operation (as Shopify's Storefront API spells it): the
 * language of every text the operation answers. src/graphql/plugins/language.ts reads it. Pothos
 * declares no directives, so it is added to the built schema, with the schema's own Language enum.
 */
export function withInContext(schema: GraphQLSchema): GraphQLSchema {
  const language = schema.getType('Language');
  if (!(language instanceof GraphQLEnumType)) throw new Error('The schema has no Language enum');
  const directive = new GraphQLDirective({
    name: IN_CONTEXT,
    description:
      `The context of the whole operation: the language of its texts (descriptions, names, captions, policies). ` +
      `Without it, the request's Accept-Language header decides (an unsupported one: ${DEFAULT_LANGUAGE}); over ` +
      'graphql-ws, an Accept-Language key of the connection_init payload (flat or under "headers"). ' +
      'Example: query Page @inContext(language: EN_US) { property(id: "1") { descriptions { headline } } }',
    locations: [DirectiveLocation.QUERY, DirectiveLocation.MUTATION, DirectiveLocation.SUBSCRIPTION],
    args: {
      language: {
        type: new GraphQLNonNull(language),
        description: `A text without a translation in it is served in ${DEFAULT_LANGUAGE}`,
      },
    },
  });
  const config = schema.toConfig();
  return new GraphQLSchema({ ...config, directives: [...config.directives, directive] });
}

export const AmenityRef = builder.objectRef<Amenity>('Amenity').implement({
  description: 'An amenity of a property, a room type or a rate plan',
  fields: (t) => ({
    code: t.exposeString('code', {
      description: 'Stable across languages and over time, e.g. `free_wifi`, `parking`, `breakfast`: filter and compare on it',
    }),
    group: t.field({ type: AmenityGroup, resolve: (a) => a.group }),
    name: t.string({ description: 'e.g. "Free Wi-Fi" (en-US), "무료 Wi-Fi" (ko-KR)', resolve: localized((a) => a.name) }),
  }),
});

/** An image as the graph serves it: with its property (for its links) and the sizes its field was asked for. */
export interface ServedImage {
  readonly image: Image;
  readonly propertyId: number;
  /** The sizes asked for on the field that returned it (images, heroImage); null: every size. */
  readonly sizes: readonly ImageSizeValue[] | null;
}

/** A size of an image as the graph serves it: its link on this service. */
interface ServedImageLink {
  readonly link: ImageLink;
  readonly href: string;
}

/** The description of the `sizes` argument of fields that return images. */
export const SIZES_DESCRIPTION = 'The sizes of the links (Image.links), smallest first; every size when absent. Example: [THUMBNAIL, LARGE]';

/** Images of a property (its own or a room type's) with the sizes asked for. */
export function servedImages(images: readonly Image[], propertyId: number, sizes: readonly ImageSizeValue[] | null | undefined): ServedImage[] {
  return images.map((image) => ({ image, propertyId, sizes: sizes ?? null }));
}

export const ImageLinkRef = builder.objectRef<ServedImageLink>('ImageLink').implement({
  description: 'An image at one size: a PNG on this service, public and cacheable (an <img> sends no credential)',
  fields: (t) => ({
    size: t.field({ type: ImageSize, resolve: (l) => l.link.size }),
    width: t.int({ description: 'Pixels, e.g. 640 for MEDIUM', resolve: (l) => l.link.width }),
    height: t.int({ description: 'Pixels: width × 2 / 3, rounded, e.g. 427 for MEDIUM', resolve: (l) => l.link.height }),
    href: t.string({
      description:
        'Absolute URL on this service (its public origin), e.g. https://api.example.com/images/1/p1/medium.png. ' +
        'Only the sizes an image advertises are served',
      resolve: (l) => l.href,
    }),
  }),
});

export const ImageRef = builder.objectRef<ServedImage>('Image').implement({
  description: 'An image of a property or of a room type, at every size of ImageSize',
  fields: (t) => ({
    imageId: t.string({ description: "Unique within its property (room types included), e.g. `p1` (a room type's: `r1-1`)", resolve: (i) => i.image.id }),
    category: t.field({ type: ImageCategory, resolve: (i) => i.image.category }),
    hero: t.boolean({ description: "Whether it is the property's main image (one per property; never a room type's)", resolve: (i) => i.image.hero }),
    caption: t.string({ description: 'e.g. "Lobby" (en-US)', resolve: (i, _args, ctx) => textIn(i.image.caption, ctx.language) }),
    links: t.field({
      type: [ImageLinkRef],
      description:
        "One per size, smallest first: the sizes of this argument, else those of the field that returned the image (images, heroImage), else every size",
      extensions: wholeList,
      args: { sizes: t.arg({ type: [ImageSize], description: 'These sizes only (default: see above). Example: [MEDIUM]' }) },
      resolve: (i, args, ctx) => {
        const sizes = args.sizes ?? i.sizes;
        const wanted = sizes ? new Set(sizes) : null;
        return i.image.links
          .filter((link) => !wanted || wanted.has(link.size))
          .map((link) => ({ link, href: imageHref(ctx.publicOrigin, i.propertyId, i.image.id, link.size) }));
      },
    }),
  }),
});
