import { builder } from './builder.js';

/**
 * GraphQL enums over the service's values: each value named in SCREAMING_SNAKE_CASE, as GraphQL
 * names enum values (`price_asc` is PRICE_ASC, `reservation.created` RESERVATION_CREATED), while
 * resolvers and inputs keep the service's own value. REST keeps the lower-case spelling.
 */
export function serviceEnum<const V extends string>(name: string, values: readonly V[], description?: string) {
  return builder.enumType(name, {
    ...(description === undefined ? {} : { description }),
    values: Object.fromEntries(values.map((value) => [enumName(value), { value }])) as Record<string, { value: V }>,
  });
}

/** `price_asc` -> PRICE_ASC, `reservation.created` -> RESERVATION_CREATED. */
export function enumName(value: string): string {
  return value.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();
}
