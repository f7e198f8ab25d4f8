/**
 * The operations GraphiQL opens with: the default query, then one tab per step of a partner's
 * booking journey (search -> a property's page -> its rates -> price check -> book -> cancel) and the live
 * booking events. Every document is written against the schema as it is (schema.graphql);
 * test/graphql/graphiql-examples.test.ts parses and validates each one, with its variables, so a
 * schema change that breaks an example fails there. Port them here, in one place.
 */

/** A GraphiQL tab as GraphiQL's `defaultTabs` takes it: the query, and variables and headers as JSON text. */
export interface ExampleTab {
  query: string;
  variables?: string;
  headers?: string;
}

/** What the headers pane holds on every tab until the user pastes a key. */
export const HEADERS_PLACEHOLDER = JSON.stringify({ 'X-Api-Key': '<your API key>' }, null, 2);

/** The first tab: what a new user runs first, once the key is in the headers pane. */
export const DEFAULT_QUERY = /* GraphQL */ `# Welcome to the Channel API.
#
# 1. Put your API key in the Headers pane below
#    (each tab has its own): {"X-Api-Key": "ck_..."}
# 2. Run with Ctrl-Enter or the run button.
#    Ctrl-Space suggests fields; Docs lists every type.
#
# The other tabs walk through a booking: search,
# a property's page and its rates, price check,
# book, cancel, and live booking events.
query Channel {
  channel {
    userId
    name
    tier
    defaultCurrency
    rateLimit {
      sandbox
      production
    }
  }
}
`;

/** 1. Availability and lowest prices of many properties. */
export const SEARCH = /* GraphQL */ `# Step 1: which properties have rooms on these dates?
# Take a property's id into step 2 (PropertyRates).
# The next page: pass pageInfo.endCursor as $after.
query Search($input: AvailabilitySearchInput!, $first: Int, $after: String) {
  availability(input: $input, first: $first, after: $after) {
    totalCount
    pageInfo {
      hasNextPage
      endCursor
    }
    edges {
      node {
        available
        currency
        lowestNightlyPrice
        lowestTotalPrice
        property {
          id
          propertyId
          name
          city
          starRating
        }
      }
    }
  }
}
`;

/** A property page: its content in one language (the @inContext directive), images at the sizes asked for. */
export const PROPERTY_PAGE = /* GraphQL */ `# A property's page: texts in the language of
# @inContext (KO_KR, EN_US, JA_JP, ZH_CN; without it,
# your Accept-Language header), images at the sizes
# you ask for (THUMBNAIL 200, MEDIUM 640, LARGE 1280 px).
query PropertyPage($id: ID!) @inContext(language: EN_US) {
  property(id: $id) {
    name
    starRating
    descriptions {
      headline
      general
    }
    heroImage(sizes: [LARGE]) {
      caption
      links {
        width
        height
        href
      }
    }
    images(sizes: [THUMBNAIL]) {
      category
      caption
      links {
        href
      }
    }
    amenities {
      code
      group
      name
    }
    checkin {
      beginTime
      endTime
      minAge
    }
    checkout {
      time
    }
    policies {
      children
      pets
    }
    roomTypes {
      name
      areaSqm
      views
      bedGroups {
        description
      }
      occupancy {
        maxAdults
        maxChildren
      }
      images(sizes: [MEDIUM]) {
        links {
          href
        }
      }
      ratePlans {
        name
        amenities {
          name
        }
      }
    }
  }
}
`;

/** 2. One property's rates, each bookable one with a price-check token. */
export const PROPERTY_RATES = /* GraphQL */ `# Step 2: the rates of one property for the party
# (its id from step 1, or its propertyId).
# Copy a priceCheckToken (30 minutes) into step 3.
query PropertyRates($id: ID!, $stay: StayInput!) {
  property(id: $id) {
    id
    name
    availability(stay: $stay) {
      checkin
      checkout
      nights
      roomTypes {
        roomtypeId
        name
        rates {
          rateplanId
          name
          mealPlan
          refundable
          availableRooms
          cancellationPolicy {
            type
            freeCancellationBefore
          }
          pricing {
            inclusiveAmount
            requestCurrency
          }
          priceCheckToken
        }
      }
    }
  }
}
`;

/** 3. The price check: re-verifies the rate and issues a book token. */
export const PRICE_CHECK = /* GraphQL */ `# Step 3: is the price still there? "matched" comes
# with a bookToken (single use, 30 minutes): copy it
# into step 4.
query PriceCheck($token: String!) {
  priceCheck(token: $token) {
    status
    bookToken
    expiresAt
    pricing {
      inclusiveAmount
      requestCurrency
      billableInclusiveAmount
      billableCurrency
    }
    cancellationPolicy {
      type
      freeCancellationBefore
    }
  }
}
`;

/** 4. Book the offer of a book token. */
export const BOOK = /* GraphQL */ `# Step 4: book it. An expected refusal (sold out,
# price changed, used token) is data with a code,
# not an error. Copy the booking's id into step 5.
mutation Book($input: CreateBookingInput!) {
  createBooking(input: $input) {
    __typename
    ... on CreateBookingSuccess {
      booking {
        id
        bookingId
        status
        checkin
        checkout
        totalAmount
        currency
        cancellationTerms {
          type
          freeCancellationBefore
        }
        property {
          name
        }
      }
    }
    ... on DomainError {
      code
      message
    }
  }
}
`;

/** 5. Cancel the booking (the fee and the refund come back on it). */
export const CANCEL = /* GraphQL */ `# Step 5: cancel; the booking comes back with the
# cancellation fee and the refund.
mutation Cancel($id: ID!) {
  cancelBooking(id: $id) {
    __typename
    ... on CancelBookingSuccess {
      booking {
        id
        bookingId
        status
        cancellationFee
        refundAmount
      }
    }
    ... on DomainError {
      code
      message
    }
  }
}
`;

/** Live booking events of the channel (GraphiQL runs it over SSE with the headers pane's key). */
export const BOOKING_EVENTS = /* GraphQL */ `# Live booking events of your channel: run this,
# then book or cancel (another tab, or REST) and
# watch them arrive. Without types: every type.
subscription BookingEvents($types: [BookingEventType!]) {
  bookingEvents(types: $types) {
    id
    type
    occurredAt
    booking {
      id
      bookingId
      status
      propertyId
      checkin
      checkout
      totalAmount
    }
  }
}
`;

const json = (value: unknown) => JSON.stringify(value, null, 2);
const DAY_MS = 86_400_000;
const isoDay = (from: Date, days: number) => new Date(from.getTime() + days * DAY_MS).toISOString().slice(0, 10);

/**
 * Every example with the variables it starts with. Dates are a month after `today` (the page is
 * made when the service starts), for two nights.
 */
export function exampleTabs(today: Date = new Date()): ExampleTab[] {
  const stay = { checkin: isoDay(today, 30), checkout: isoDay(today, 32) };
  return [
    { query: DEFAULT_QUERY },
    { query: SEARCH, variables: json({ input: { ...stay, adults: 2, city: 'Seoul' }, first: 10 }) },
    { query: PROPERTY_PAGE, variables: json({ id: '1' }) },
    { query: PROPERTY_RATES, variables: json({ id: '1', stay: { ...stay, adults: 2 } }) },
    { query: PRICE_CHECK, variables: json({ token: '<priceCheckToken from PropertyRates>' }) },
    {
      query: BOOK,
      variables: json({
        input: { bookToken: '<bookToken from PriceCheck>', bookerName: 'Jane Doe', bookerEmail: 'jane@example.com', channelBookingNumber: 'OTA-1001' },
      }),
    },
    { query: CANCEL, variables: json({ id: '<booking id from Book>' }) },
    { query: BOOKING_EVENTS, variables: json({ types: ['RESERVATION_CREATED', 'RESERVATION_CONFIRMED', 'RESERVATION_CANCELLED'] }) },
  ].map((tab) => ({ ...tab, headers: HEADERS_PLACEHOLDER }));
}
