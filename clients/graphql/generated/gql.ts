/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "mutation Book($input: CreateBookingInput!) {\n  createBooking(input: $input) {\n    __typename\n    ... on CreateBookingSuccess {\n      booking {\n        bookingId\n        status\n        totalAmount\n        currency\n        cancellationDeadline\n      }\n    }\n    ... on BookTokenError {\n      code\n      message\n      bookingId\n    }\n    ... on InsufficientBalanceError {\n      code\n      message\n      required\n      available\n    }\n    ... on SoldOutError {\n      code\n      message\n    }\n    ... on PriceChangedError {\n      code\n      message\n    }\n  }\n}": typeof types.BookDocument,
    "query PropertyPage($id: ID!, $stay: StayInput!) {\n  property(id: $id) {\n    propertyId\n    name\n    city\n    starRating\n    heroImage(sizes: [LARGE]) {\n      links {\n        href\n      }\n    }\n    availability(stay: $stay) {\n      nights\n      currency\n      roomTypes {\n        roomtypeId\n        name\n        rates {\n          rateplanId\n          availableRooms\n          refundable\n          priceCheckToken\n        }\n      }\n    }\n  }\n}": typeof types.PropertyPageDocument,
};
const documents: Documents = {
    "mutation Book($input: CreateBookingInput!) {\n  createBooking(input: $input) {\n    __typename\n    ... on CreateBookingSuccess {\n      booking {\n        bookingId\n        status\n        totalAmount\n        currency\n        cancellationDeadline\n      }\n    }\n    ... on BookTokenError {\n      code\n      message\n      bookingId\n    }\n    ... on InsufficientBalanceError {\n      code\n      message\n      required\n      available\n    }\n    ... on SoldOutError {\n      code\n      message\n    }\n    ... on PriceChangedError {\n      code\n      message\n    }\n  }\n}": types.BookDocument,
    "query PropertyPage($id: ID!, $stay: StayInput!) {\n  property(id: $id) {\n    propertyId\n    name\n    city\n    starRating\n    heroImage(sizes: [LARGE]) {\n      links {\n        href\n      }\n    }\n    availability(stay: $stay) {\n      nights\n      currency\n      roomTypes {\n        roomtypeId\n        name\n        rates {\n          rateplanId\n          availableRooms\n          refundable\n          priceCheckToken\n        }\n      }\n    }\n  }\n}": types.PropertyPageDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation Book($input: CreateBookingInput!) {\n  createBooking(input: $input) {\n    __typename\n    ... on CreateBookingSuccess {\n      booking {\n        bookingId\n        status\n        totalAmount\n        currency\n        cancellationDeadline\n      }\n    }\n    ... on BookTokenError {\n      code\n      message\n      bookingId\n    }\n    ... on InsufficientBalanceError {\n      code\n      message\n      required\n      available\n    }\n    ... on SoldOutError {\n      code\n      message\n    }\n    ... on PriceChangedError {\n      code\n      message\n    }\n  }\n}"): (typeof documents)["mutation Book($input: CreateBookingInput!) {\n  createBooking(input: $input) {\n    __typename\n    ... on CreateBookingSuccess {\n      booking {\n        bookingId\n        status\n        totalAmount\n        currency\n        cancellationDeadline\n      }\n    }\n    ... on BookTokenError {\n      code\n      message\n      bookingId\n    }\n    ... on InsufficientBalanceError {\n      code\n      message\n      required\n      available\n    }\n    ... on SoldOutError {\n      code\n      message\n    }\n    ... on PriceChangedError {\n      code\n      message\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query PropertyPage($id: ID!, $stay: StayInput!) {\n  property(id: $id) {\n    propertyId\n    name\n    city\n    starRating\n    heroImage(sizes: [LARGE]) {\n      links {\n        href\n      }\n    }\n    availability(stay: $stay) {\n      nights\n      currency\n      roomTypes {\n        roomtypeId\n        name\n        rates {\n          rateplanId\n          availableRooms\n          refundable\n          priceCheckToken\n        }\n      }\n    }\n  }\n}"): (typeof documents)["query PropertyPage($id: ID!, $stay: StayInput!) {\n  property(id: $id) {\n    propertyId\n    name\n    city\n    starRating\n    heroImage(sizes: [LARGE]) {\n      links {\n        href\n      }\n    }\n    availability(stay: $stay) {\n      nights\n      currency\n      roomTypes {\n        roomtypeId\n        name\n        rates {\n          rateplanId\n          availableRooms\n          refundable\n          priceCheckToken\n        }\n      }\n    }\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;