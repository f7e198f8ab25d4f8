/* eslint-disable */
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type Maybe<T> = T | null;
export type InputMaybe<T> = T | null | undefined;
export type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
export type MakeOptional<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]?: Maybe<T[SubKey]> };
export type MakeMaybe<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]: Maybe<T[SubKey]> };
export type MakeEmpty<T extends { [key: string]: unknown }, K extends keyof T> = { [_ in K]?: never };
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /** A calendar day, YYYY-MM-DD (RFC 3339 full-date), as at the property: check-in, check-out, a night */
  Date: { input: string; output: string; }
  /** An instant, as an ISO 8601 (RFC 3339) string in UTC, with milliseconds: 2026-11-27T05:44:06.000Z */
  DateTime: { input: string; output: string; }
  /** An amount: a whole number of the currency's smallest unit (KRW has none below the won), as a JSON number (at most 2^53 - 1). The currency is the one named beside it */
  Money: { input: number; output: number; }
};

/** Who a guest counts as, by age */
export type AgeCategoryName =
  | 'ADULT'
  | 'CHILD'
  | 'INFANT';

/** What an amenity is about, for grouping them on a page */
export type AmenityGroup =
  | 'ACCESSIBILITY'
  | 'FAMILY'
  | 'GENERAL'
  | 'INTERNET'
  | 'PARKING'
  | 'WELLNESS';

/** SUSPENDED: every credential of the app is refused (set by the operator) */
export type AppStatus =
  | 'ACTIVE'
  | 'SUSPENDED';

/** A search of many properties (REST: the query of GET /channel/v1/search/availability); pages with first/after */
export type AvailabilitySearchInput = {
  /** Not with occupancy */
  adults?: InputMaybe<Scalars['Int']['input']>;
  checkin: Scalars['Date']['input'];
  checkout: Scalars['Date']['input'];
  children?: InputMaybe<Scalars['Int']['input']>;
  city?: InputMaybe<Scalars['String']['input']>;
  currency?: InputMaybe<SearchCurrency>;
  /** One per room: <adults> or <adults>-<age>,<age> */
  occupancy?: InputMaybe<Array<Scalars['String']['input']>>;
  priceMax?: InputMaybe<Scalars['Float']['input']>;
  /** Per night, request currency */
  priceMin?: InputMaybe<Scalars['Float']['input']>;
  propertyIds?: InputMaybe<Array<Scalars['Int']['input']>>;
  rooms?: InputMaybe<Scalars['Int']['input']>;
  sortBy?: InputMaybe<SortBy>;
  starRatingMin?: InputMaybe<Scalars['Float']['input']>;
};

export type BankAccountInput = {
  accountHolder: Scalars['String']['input'];
  accountNumber: Scalars['String']['input'];
  bankCode: Scalars['String']['input'];
  bankName: Scalars['String']['input'];
};

export type BatchRatesInput = {
  /** For every item; default KRW */
  currency?: InputMaybe<SearchCurrency>;
  /** 1 to 50 items */
  items: Array<BatchRatesItemInput>;
};

/** One property and stay, as propertyAvailability takes them */
export type BatchRatesItemInput = {
  /** Adults in all rooms; not with occupancy */
  adults?: InputMaybe<Scalars['Int']['input']>;
  checkin: Scalars['Date']['input'];
  checkout: Scalars['Date']['input'];
  children?: InputMaybe<Scalars['Int']['input']>;
  /** One age per child; a child without one counts as 8 */
  childrenAges?: InputMaybe<Array<Scalars['Int']['input']>>;
  /** One per room: <adults> or <adults>-<age>,<age> */
  occupancy?: InputMaybe<Array<Scalars['String']['input']>>;
  propertyId: Scalars['Int']['input'];
  /** Only this rate plan */
  rateplanId?: InputMaybe<Scalars['String']['input']>;
  rooms?: InputMaybe<Scalars['Int']['input']>;
  /** Only this room type */
  roomtypeId?: InputMaybe<Scalars['String']['input']>;
};

export type BatchRatesItemStatus =
  | 'ERROR'
  | 'OK';

/** A booking event type; RESERVATION_CREATED is the event type `reservation.created` of webhook bodies */
export type BookingEventType =
  | 'RESERVATION_CANCELLED'
  | 'RESERVATION_CHECKED_IN'
  | 'RESERVATION_CHECKED_OUT'
  | 'RESERVATION_CONFIRMED'
  | 'RESERVATION_CREATED'
  | 'RESERVATION_FAILED'
  | 'RESERVATION_MODIFIED'
  | 'RESERVATION_NO_SHOW';

export type BookingFilter = {
  /** The partner's booking number (REST: affiliate_reference_id) */
  channelBookingNumber?: InputMaybe<Scalars['String']['input']>;
  /** Inclusive */
  checkinFrom?: InputMaybe<Scalars['Date']['input']>;
  /** Inclusive */
  checkinTo?: InputMaybe<Scalars['Date']['input']>;
  /** UTC day, inclusive */
  createdFrom?: InputMaybe<Scalars['Date']['input']>;
  /** UTC day, inclusive */
  createdTo?: InputMaybe<Scalars['Date']['input']>;
  status?: InputMaybe<BookingStatus>;
};

/** The statuses a partner sees (spec §2.2) */
export type BookingStatus =
  | 'CANCELLED'
  | 'CANCELLING'
  | 'CHECKED_IN'
  | 'CHECKED_OUT'
  | 'COMPLETED'
  | 'CONFIRMED'
  | 'FAILED'
  | 'NO_SHOW'
  | 'PENDING';

export type CancellationPolicyType =
  | 'FLEXIBLE'
  | 'MODERATE'
  | 'NON_REFUNDABLE'
  | 'STRICT';

export type ChannelTier =
  | 'SANDBOX'
  | 'STARTER';

/** The body of POST /channel/v1/bookings in camelCase. The charge is the amount signed into the book token */
export type CreateBookingInput = {
  /** From priceCheck; single use */
  bookToken: Scalars['String']['input'];
  bookerEmail?: InputMaybe<Scalars['String']['input']>;
  bookerName: Scalars['String']['input'];
  /** The partner's own booking number */
  channelBookingNumber?: InputMaybe<Scalars['String']['input']>;
  /** ISO 3166-1 alpha-2 */
  guestCountry?: InputMaybe<Scalars['String']['input']>;
  guestFirstName?: InputMaybe<Scalars['String']['input']>;
  guestLastName?: InputMaybe<Scalars['String']['input']>;
  guestPhone?: InputMaybe<Scalars['String']['input']>;
  /** Default and most: the adults the book token was priced for (every room together); more is a VALIDATION_ERROR */
  guestsAdult?: InputMaybe<Scalars['Int']['input']>;
  /** Default and most: the children the book token was priced for (every room together); more is a VALIDATION_ERROR */
  guestsChild?: InputMaybe<Scalars['Int']['input']>;
  /** Display only; default: the catalog name */
  propertyName?: InputMaybe<Scalars['String']['input']>;
  /** Display only */
  ratePlan?: InputMaybe<Scalars['String']['input']>;
  /** Display only */
  roomType?: InputMaybe<Scalars['String']['input']>;
  /** Informational; the charge is the book token amount */
  saleAmount?: InputMaybe<Scalars['Money']['input']>;
  specialRequests?: InputMaybe<Scalars['String']['input']>;
};

/** The body of POST /channel/v1/reservations in camelCase: a bookToken (its offer at its price), or propertyId, the dates and the rooms, priced now by the search and the price check. Amounts are never taken from the client */
export type CreateReservationInput = {
  /** The party of a one-room reservation (without rooms) */
  adults?: InputMaybe<Scalars['Int']['input']>;
  /** HH:MM, local time at the property */
  arrivalTime?: InputMaybe<Scalars['String']['input']>;
  /** From priceCheck; single use */
  bookToken?: InputMaybe<Scalars['String']['input']>;
  /** The partner's own reference */
  channelBookingNumber?: InputMaybe<Scalars['String']['input']>;
  checkIn?: InputMaybe<Scalars['Date']['input']>;
  checkOut?: InputMaybe<Scalars['Date']['input']>;
  children?: InputMaybe<Scalars['Int']['input']>;
  childrenAges?: InputMaybe<Array<Scalars['Int']['input']>>;
  /** Currency to show prices in (default KRW); the channel is billed in KRW */
  currency?: InputMaybe<SearchCurrency>;
  guest: ReservationGuestInput;
  propertyId?: InputMaybe<Scalars['Int']['input']>;
  rateplanId?: InputMaybe<Scalars['String']['input']>;
  /** Several rooms, one booking each, sharing one confirmation number */
  rooms?: InputMaybe<Array<ReservationRoomInput>>;
  /** One room, or the default of each room in rooms */
  roomtypeId?: InputMaybe<Scalars['String']['input']>;
  specialRequests?: InputMaybe<Scalars['String']['input']>;
};

/** The body of POST /channel/v1/webhooks */
export type CreateWebhookInput = {
  /** At most 200 characters, no NUL character */
  description?: InputMaybe<Scalars['String']['input']>;
  /** Each type once; default: every booking event type */
  events?: InputMaybe<Array<BookingEventType>>;
  /** Where deliveries are POSTed: a public address (unless the service allows private ones), https (http also in the sandbox), at most 2048 characters */
  url: Scalars['String']['input'];
};

export type Currency =
  | 'CNY'
  | 'EUR'
  | 'HKD'
  | 'JPY'
  | 'KRW'
  | 'SGD'
  | 'THB'
  | 'TWD'
  | 'USD'
  | 'VND';

/** Every code the API answers: DomainError.code, extensions.code of a top-level error, and REST's error.code (the token endpoint answers the RFC 6749 codes instead) */
export type ErrorCode =
  | 'ALIAS_LIMIT_EXCEEDED'
  | 'ANSWER_LIMIT_EXCEEDED'
  | 'BAD_REQUEST'
  | 'BAD_USER_INPUT'
  | 'BOOKING_ALREADY_CANCELLED'
  | 'BOOKING_CHANGED'
  | 'BOOKING_NOT_CANCELLABLE'
  | 'BOOKING_NOT_MODIFIABLE'
  | 'BOOK_TOKEN_EXPIRED'
  | 'BOOK_TOKEN_INVALID'
  | 'BOOK_TOKEN_USED'
  | 'COST_LIMIT_EXCEEDED'
  | 'CSRF_PREVENTION'
  | 'DELIVERY_HELD'
  | 'DELIVERY_PENDING'
  | 'DEPTH_LIMIT_EXCEEDED'
  | 'DIRECTIVE_LIMIT_EXCEEDED'
  | 'FORBIDDEN'
  | 'GRAPHQL_PARSE_FAILED'
  | 'GRAPHQL_VALIDATION_FAILED'
  | 'HTTPS_REQUIRED'
  | 'IDEMPOTENCY_KEY_IN_PROGRESS'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'INSUFFICIENT_BALANCE'
  | 'INSUFFICIENT_SCOPE'
  | 'INTERNAL_ERROR'
  | 'INTROSPECTION_DISABLED'
  | 'INVALID_REQUEST'
  | 'INVALID_TOKEN'
  | 'INVALID_TRANSITION'
  | 'IP_ALLOW_LIST_LOCKOUT'
  | 'IP_NOT_ALLOWED'
  | 'MAIL_DELIVERY_FAILED'
  | 'MESSAGE_TOO_LARGE'
  | 'METHOD_NOT_ALLOWED'
  | 'MODIFICATION_IN_PROGRESS'
  | 'MODIFICATION_NOT_ALLOWED'
  | 'NOT_ACCEPTABLE'
  | 'NOT_FOUND'
  | 'NOT_IMPLEMENTED'
  | 'PAYLOAD_TOO_LARGE'
  | 'PERSISTED_QUERY_NOT_FOUND'
  | 'PERSISTED_QUERY_ONLY'
  | 'PRICE_CHANGED'
  | 'QUERY_REQUIRED'
  | 'RATE_LIMIT_EXCEEDED'
  | 'REQUEST_TIMEOUT'
  | 'SERVICE_UNAVAILABLE'
  | 'SOLD_OUT'
  | 'SUBSCRIPTION_LIMIT_EXCEEDED'
  | 'TOKEN_ALREADY_USED'
  | 'TOKEN_EXPIRED'
  | 'TOKEN_LIMIT_EXCEEDED'
  | 'UNAUTHORIZED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UPSTREAM_ERROR'
  | 'VALIDATION_ERROR'
  | 'VOUCHER_MAIL_LIMIT_EXCEEDED'
  | 'VOUCHER_RECIPIENT_NOT_ALLOWED'
  | 'WEBHOOK_DISABLED'
  | 'WEBHOOK_LIMIT_REACHED';

/** What an image shows */
export type ImageCategory =
  | 'BATHROOM'
  | 'DINING'
  | 'EXTERIOR'
  | 'FITNESS'
  | 'LOBBY'
  | 'POOL'
  | 'ROOM'
  | 'SPA'
  | 'VIEW';

/** The sizes every image is served at, 3:2: THUMBNAIL 200 × 133, MEDIUM 640 × 427, LARGE 1280 × 853 pixels */
export type ImageSize =
  | 'LARGE'
  | 'MEDIUM'
  | 'THUMBNAIL';

/** A language content is served in (BCP 47: KO_KR is ko-KR). ko-KR is the default and the fallback of every text */
export type Language =
  | 'EN_US'
  | 'JA_JP'
  | 'KO_KR'
  | 'ZH_CN';

export type MealPlan =
  | 'BREAKFAST'
  | 'FULL_BOARD'
  | 'HALF_BOARD'
  | 'ROOM_ONLY';

export type ModificationNotAllowedReason =
  | 'CHECKED_IN'
  | 'CHECK_IN_DAY_REACHED'
  | 'FREE_CHANGE_PERIOD_ENDED'
  | 'MULTI_ROOM'
  | 'NOT_CONFIRMED';

/** New dates for a booking (REST: POST /channel/v1/reservations/{id}/modify-dates); occupancy, room and rate stay */
export type ModifyBookingDatesInput = {
  /** From today at the property */
  checkin: Scalars['Date']['input'];
  /** 1 to 30 nights after checkin */
  checkout: Scalars['Date']['input'];
  /** True: only say what the change would be (default false: make it) */
  preview?: InputMaybe<Scalars['Boolean']['input']>;
  /** Your customer's price for the new stay, as createBooking's saleAmount (informational; the voucher prints it). A commit stores it; without it, a commit that changes the total clears the old one (the voucher then shows the total paid). Ignored on a preview */
  saleAmount?: InputMaybe<Scalars['Money']['input']>;
};

export type PriceCheckStatus =
  | 'MATCHED'
  | 'PRICE_CHANGED'
  | 'SOLD_OUT';

export type PropertyAvailabilityInput = {
  adults: Scalars['Int']['input'];
  checkin: Scalars['Date']['input'];
  checkout: Scalars['Date']['input'];
  children?: InputMaybe<Scalars['Int']['input']>;
  childrenAges?: InputMaybe<Array<Scalars['Int']['input']>>;
  currency?: InputMaybe<SearchCurrency>;
  propertyId: Scalars['Int']['input'];
  rateplanId?: InputMaybe<Scalars['String']['input']>;
  rooms?: InputMaybe<Scalars['Int']['input']>;
  roomtypeId?: InputMaybe<Scalars['String']['input']>;
};

export type RatesInput = {
  adults?: InputMaybe<Scalars['Int']['input']>;
  checkin?: InputMaybe<Scalars['Date']['input']>;
  checkout?: InputMaybe<Scalars['Date']['input']>;
  currency?: InputMaybe<SearchCurrency>;
  propertyId: Scalars['Int']['input'];
};

/** Filters of reservations (REST: GET /channel/v1/reservations); they combine */
export type ReservationFilter = {
  /** Check-in on or after */
  checkInFrom?: InputMaybe<Scalars['Date']['input']>;
  /** Check-in on or before */
  checkInTo?: InputMaybe<Scalars['Date']['input']>;
  /** Exact, in any case */
  confirmationNumber?: InputMaybe<Scalars['String']['input']>;
  /** The guest's e-mail, compared case-insensitively */
  guestEmail?: InputMaybe<Scalars['String']['input']>;
};

/** The lead guest and contact */
export type ReservationGuestInput = {
  /** ISO 3166-1 alpha-2 */
  country?: InputMaybe<Scalars['String']['input']>;
  email: Scalars['String']['input'];
  firstName: Scalars['String']['input'];
  lastName: Scalars['String']['input'];
  phone?: InputMaybe<Scalars['String']['input']>;
};

export type ReservationRoomGuestInput = {
  firstName: Scalars['String']['input'];
  lastName: Scalars['String']['input'];
};

export type ReservationRoomInput = {
  /** Required without a bookToken */
  adults?: InputMaybe<Scalars['Int']['input']>;
  /** Taken as 8 years old unless childrenAges says */
  children?: InputMaybe<Scalars['Int']['input']>;
  childrenAges?: InputMaybe<Array<Scalars['Int']['input']>>;
  /** Who stays in this room, when not the reservation's guest; not for the first room */
  guest?: InputMaybe<ReservationRoomGuestInput>;
  /** Default: the top-level rateplanId */
  rateplanId?: InputMaybe<Scalars['String']['input']>;
  /** Default: the top-level roomtypeId */
  roomtypeId?: InputMaybe<Scalars['String']['input']>;
};

/** What a room's windows look onto */
export type RoomView =
  | 'CITY'
  | 'COURTYARD'
  | 'GARDEN'
  | 'MOUNTAIN'
  | 'POOL'
  | 'RIVER'
  | 'SEA';

export type SearchCurrency =
  | 'CNY'
  | 'EUR'
  | 'HKD'
  | 'JPY'
  | 'KRW'
  | 'SGD'
  | 'THB'
  | 'TWD'
  | 'USD'
  | 'VND';

/** The body of POST /channel/v1/reservations/{id}/send-voucher */
export type SendVoucherInput = {
  /** The attachment; default pdf */
  format?: InputMaybe<VoucherFormat>;
  /** One plain address. Default: the booking's booker e-mail (required when it has none) */
  to?: InputMaybe<Scalars['String']['input']>;
};

/** The body of PUT /channel/v1/apps/me/ip-allow-list */
export type SetIpAllowListInput = {
  /** The new list, replacing the old one whole: at most 50 IPv4 or IPv6 addresses or CIDR ranges; empty allows any address. It must include the address of this request */
  ipAllowList: Array<Scalars['String']['input']>;
};

export type SortBy =
  | 'PRICE_ASC'
  | 'PRICE_DESC'
  | 'STAR_RATING';

/** A stay and party to price, as propertyAvailability takes them without the property */
export type StayInput = {
  /** Adults in all rooms; not with occupancy */
  adults?: InputMaybe<Scalars['Int']['input']>;
  checkin: Scalars['Date']['input'];
  checkout: Scalars['Date']['input'];
  children?: InputMaybe<Scalars['Int']['input']>;
  /** One age per child; a child without one counts as 8 */
  childrenAges?: InputMaybe<Array<Scalars['Int']['input']>>;
  /** Default KRW */
  currency?: InputMaybe<SearchCurrency>;
  /** One per room: <adults> or <adults>-<age>,<age> */
  occupancy?: InputMaybe<Array<Scalars['String']['input']>>;
  /** Only this rate plan */
  rateplanId?: InputMaybe<Scalars['String']['input']>;
  rooms?: InputMaybe<Scalars['Int']['input']>;
  /** Only this room type */
  roomtypeId?: InputMaybe<Scalars['String']['input']>;
};

/** Fields to change (REST: PATCH /channel/v1/bookings/{id}); omitted fields stay, null clears one. specialRequests only before check-in */
export type UpdateBookingInput = {
  bookerEmail?: InputMaybe<Scalars['String']['input']>;
  /** Cannot be cleared */
  bookerName?: InputMaybe<Scalars['String']['input']>;
  guestCountry?: InputMaybe<Scalars['String']['input']>;
  guestFirstName?: InputMaybe<Scalars['String']['input']>;
  guestLastName?: InputMaybe<Scalars['String']['input']>;
  guestPhone?: InputMaybe<Scalars['String']['input']>;
  specialRequests?: InputMaybe<Scalars['String']['input']>;
};

/** Fields to change; omitted fields stay as they are. bankAccount: null removes the account. */
export type UpdateChannelInput = {
  bankAccount?: InputMaybe<BankAccountInput>;
  company?: InputMaybe<Scalars['String']['input']>;
  defaultCurrency?: InputMaybe<Currency>;
  name?: InputMaybe<Scalars['String']['input']>;
};

/** Omitted fields stay; null clears phone or country */
export type UpdateReservationGuestInput = {
  country?: InputMaybe<Scalars['String']['input']>;
  email?: InputMaybe<Scalars['String']['input']>;
  firstName?: InputMaybe<Scalars['String']['input']>;
  lastName?: InputMaybe<Scalars['String']['input']>;
  phone?: InputMaybe<Scalars['String']['input']>;
};

/** Fields to change (REST: PATCH /channel/v1/reservations/{id}); omitted fields stay, null clears one. specialRequests and arrivalTime only before check-in */
export type UpdateReservationInput = {
  arrivalTime?: InputMaybe<Scalars['String']['input']>;
  guest?: InputMaybe<UpdateReservationGuestInput>;
  specialRequests?: InputMaybe<Scalars['String']['input']>;
};

/** Fields to change; omitted fields stay, null clears description (url and events cannot be cleared) */
export type UpdateWebhookInput = {
  description?: InputMaybe<Scalars['String']['input']>;
  /** false holds deliveries (status held); true resumes a disabled webhook and sends what was held at once */
  enabled?: InputMaybe<Scalars['Boolean']['input']>;
  events?: InputMaybe<Array<BookingEventType>>;
  url?: InputMaybe<Scalars['String']['input']>;
};

/** PDF (A4) or HTML (one self-contained page) */
export type VoucherFormat =
  | 'HTML'
  | 'PDF';

/** PENDING: not yet delivered, retried on its schedule. HELD: waiting while the webhook is disabled (enabling it sends it). DELIVERED: a 2xx answer. FAILED: every attempt failed */
export type WebhookDeliveryStatus =
  | 'DELIVERED'
  | 'FAILED'
  | 'HELD'
  | 'PENDING';

/** ACTIVE: deliveries go out. DISABLED: deliveries are held (by the channel, or after a delivery failed for its whole retry schedule) */
export type WebhookStatus =
  | 'ACTIVE'
  | 'DISABLED';

export type BookMutationVariables = Exact<{
  input: CreateBookingInput;
}>;


export type BookMutation = { __typename?: 'Mutation', createBooking:
    | { __typename: 'BookTokenError', code: ErrorCode, message: string, bookingId?: string | null }
    | { __typename: 'CreateBookingSuccess', booking: { __typename?: 'Booking', bookingId: string, status: BookingStatus, totalAmount: number, currency: string, cancellationDeadline?: string | null } }
    | { __typename: 'InsufficientBalanceError', code: ErrorCode, message: string, required: number, available: number }
    | { __typename: 'PriceChangedError', code: ErrorCode, message: string }
    | { __typename: 'SoldOutError', code: ErrorCode, message: string }
   };

export type PropertyPageQueryVariables = Exact<{
  id: Scalars['ID']['input'];
  stay: StayInput;
}>;


export type PropertyPageQuery = { __typename?: 'Query', property?: { __typename?: 'Property', propertyId: number, name: string, city: string, starRating: number, heroImage?: { __typename?: 'Image', links: Array<{ __typename?: 'ImageLink', href: string }> } | null, availability?: { __typename?: 'PropertyAvailability', nights: number, currency: SearchCurrency, roomTypes: Array<{ __typename?: 'RoomOffers', roomtypeId: string, name: string, rates: Array<{ __typename?: 'RateOffer', rateplanId: string, availableRooms: number, refundable: boolean, priceCheckToken?: string | null }> }> } | null } | null };


export const BookDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"Book"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"CreateBookingInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createBooking"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__typename"}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"CreateBookingSuccess"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"booking"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"bookingId"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"totalAmount"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"cancellationDeadline"}}]}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"BookTokenError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"bookingId"}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"InsufficientBalanceError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}},{"kind":"Field","name":{"kind":"Name","value":"required"}},{"kind":"Field","name":{"kind":"Name","value":"available"}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"SoldOutError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}},{"kind":"InlineFragment","typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"PriceChangedError"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"code"}},{"kind":"Field","name":{"kind":"Name","value":"message"}}]}}]}}]}}]} as unknown as DocumentNode<BookMutation, BookMutationVariables>;
export const PropertyPageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"PropertyPage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"stay"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"StayInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"property"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"propertyId"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"city"}},{"kind":"Field","name":{"kind":"Name","value":"starRating"}},{"kind":"Field","name":{"kind":"Name","value":"heroImage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"sizes"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"LARGE"}]}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"links"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"href"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"availability"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"stay"},"value":{"kind":"Variable","name":{"kind":"Name","value":"stay"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nights"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"roomTypes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"roomtypeId"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"rates"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"rateplanId"}},{"kind":"Field","name":{"kind":"Name","value":"availableRooms"}},{"kind":"Field","name":{"kind":"Name","value":"refundable"}},{"kind":"Field","name":{"kind":"Name","value":"priceCheckToken"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<PropertyPageQuery, PropertyPageQueryVariables>;