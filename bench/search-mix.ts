/**
 * The query mix of the availability-search scenario of `npm run bench`: a fixed sequence of
 * multi-property searches (`GET /channel/v1/search/availability`) drawn from a seeded generator,
 * so every run (and the baseline) sends the same searches in the same order, with dates counted
 * from the run's day. All connections take the next search of the sequence in turn (one shared
 * counter), cycling when it ends. MIX_TEXT below is what bench/README.md states.
 */

import { prng } from '../src/simulator/dataset.js';

/** The dimensions of a search and their weights (relative). */
const CITIES: [string | null, number][] = [
  [null, 30], // no city: the whole catalog (500 properties)
  ['Seoul', 20],
  ['Busan', 10],
  ['Jeju', 10],
  ['Tokyo', 10],
  ['Osaka', 8],
  ['Bangkok', 7],
  ['Taipei', 5],
];
/** Days from the run's day (UTC) to the check-in. */
const CHECKINS: [number, number][] = [
  [7, 15],
  [14, 20],
  [21, 15],
  [30, 20],
  [45, 12],
  [60, 10],
  [90, 8],
];
const NIGHTS: [number, number][] = [
  [1, 35],
  [2, 40],
  [3, 25],
];
const PARTIES: [string, string, number][] = [
  ['2 adults', 'adults=2', 55],
  ['1 adult', 'adults=1', 15],
  ['2 adults and a child of 7', 'occupancy=2-7', 15],
  ['4 adults in 2 rooms', 'adults=4&rooms=2', 15],
];
/** Sorting and page (not sent to the provider: the same provider query). */
const VIEWS: [string, string, number][] = [
  ['by price, page 1', '&sort_by=price_asc', 70],
  ['by price, page 2', '&sort_by=price_asc&page=2', 15],
  ['by star rating, page 1', '&sort_by=star_rating', 15],
];

export const MIX_SEED = 18;
export const MIX_LENGTH = 1000;

function pick<T extends unknown[]>(random: () => number, options: T[]): T {
  const total = options.reduce((n, o) => n + (o[o.length - 1] as number), 0);
  let roll = random() * total;
  for (const o of options) {
    roll -= o[o.length - 1] as number;
    if (roll < 0) return o;
  }
  return options[options.length - 1]!;
}

export interface SearchMix {
  /** The sequence, as request paths. */
  paths: string[];
  /** Its distinct paths, in order of first appearance. */
  distinct: string[];
  /** Distinct provider queries (dates, party, city): what a provider-side cache could share. */
  providerQueries: number;
  /** Per dimension, the share of each value in the sequence. */
  shares: Record<string, Record<string, number>>;
}

const DAY_MS = 86_400_000;

/** The sequence for a run on `day` (its dates are counted from that day, UTC). */
export function searchMix(day: Date = new Date(), seed = MIX_SEED, length = MIX_LENGTH): SearchMix {
  const random = prng(seed);
  const today = Math.floor(day.getTime() / DAY_MS) * DAY_MS;
  const iso = (t: number) => new Date(t).toISOString().slice(0, 10);
  const paths: string[] = [];
  const providerQueries = new Set<string>();
  const shares: Record<string, Record<string, number>> = { city: {}, checkin: {}, nights: {}, party: {}, view: {} };
  const count = (dimension: string, value: string) => {
    shares[dimension]![value] = (shares[dimension]![value] ?? 0) + 1 / length;
  };
  for (let i = 0; i < length; i++) {
    const [city] = pick(random, CITIES);
    const [days] = pick(random, CHECKINS);
    const [nights] = pick(random, NIGHTS);
    const [party, partyQuery] = pick(random, PARTIES);
    const [view, viewQuery] = pick(random, VIEWS);
    const checkin = iso(today + days * DAY_MS);
    const checkout = iso(today + (days + nights) * DAY_MS);
    const provider = `checkin=${checkin}&checkout=${checkout}&${partyQuery}${city ? `&city=${encodeURIComponent(city)}` : ''}`;
    providerQueries.add(provider);
    paths.push(`/channel/v1/search/availability?${provider}&per_page=20${viewQuery}`);
    count('city', city ?? 'none (whole catalog)');
    count('checkin', `+${days} d`);
    count('nights', String(nights));
    count('party', party);
    count('view', view);
  }
  return { paths, distinct: [...new Set(paths)], providerQueries: providerQueries.size, shares };
}

function percent(share: number): string {
  return `${Math.round(share * 100)} %`;
}

/** The mix in words, with the shares of this run's sequence. */
export function mixText(mix: SearchMix): string {
  const dim = (name: string, label: string) =>
    `${label}: ${Object.entries(mix.shares[name]!)
      .sort((a, b) => b[1] - a[1])
      .map(([v, s]) => `${v} ${percent(s)}`)
      .join(', ')}`;
  return (
    `${mix.paths.length.toLocaleString('en-US')} searches drawn once from a seeded generator (mulberry32, seed ${MIX_SEED}; bench/search-mix.ts), ` +
    `sent in order and cycled, all connections taking the next one in turn: ${mix.distinct.length} distinct requests, ` +
    `${mix.providerQueries} distinct provider queries (dates, party, city). Each is ` +
    '`GET /channel/v1/search/availability?checkin=…&checkout=…&<party>[&city=…]&per_page=20&sort_by=…[&page=2]`. ' +
    `${dim('city', 'City')}. ${dim('checkin', 'Check-in, days after the run\'s day')}. ${dim('nights', 'Nights')}. ` +
    `${dim('party', 'Party')}. ${dim('view', 'Order and page')}.`
  );
}
