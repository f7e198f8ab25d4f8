import { describe, expect, it } from 'vitest';
import { CITIES, Dataset, nightOf, PROPERTY_CACHE_SIZE, priceOn, taxAndFees } from '../../src/simulator/dataset.js';

describe('simulator dataset', () => {
  const data = new Dataset(42, 500);

  it('is deterministic for a seed and differs between seeds', () => {
    expect(new Dataset(42, 500).property(17)).toEqual(data.property(17));
    expect(new Dataset(43, 500).property(17)).not.toEqual(data.property(17));
  });

  it('has only ids 1..size', () => {
    expect(data.property(0)).toBeUndefined();
    expect(data.property(501)).toBeUndefined();
    expect(data.property(1.5)).toBeUndefined();
    expect(new Dataset(1, 100_000).property(100_000)?.id).toBe(100_000);
    expect(() => new Dataset(1, 100_001)).toThrow(RangeError);
  });

  it('looks like the market: cities, stars, rooms, the four policies, a year of updates', () => {
    const all = Array.from({ length: 500 }, (_, i) => data.property(i + 1)!);
    const korean = all.filter((p) => p.country === 'KR');
    expect(korean.length / all.length).toBeGreaterThan(0.5);
    expect(new Set(all.map((p) => p.city)).size).toBe(CITIES.length);
    expect(all.every((p) => p.starRating >= 1 && p.starRating <= 5 && (p.starRating * 2) % 1 === 0)).toBe(true);
    expect(korean.every((p) => p.timezone === 'Asia/Seoul')).toBe(true);
    const policies = new Set(all.flatMap((p) => p.roomTypes.flatMap((r) => r.ratePlans.map((rp) => rp.cancellationPolicy))));
    expect([...policies].sort()).toEqual(['flexible', 'moderate', 'non_refundable', 'strict']);
    const times = all.map((p) => p.updatedAt.getTime());
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThan(300 * 86_400_000);
    for (const p of all) {
      expect(p.roomTypes.length).toBeGreaterThanOrEqual(2);
      for (const r of p.roomTypes) {
        expect(r.maxOccupancy).toBeGreaterThanOrEqual(2);
        expect(r.bedGroups.length).toBeGreaterThanOrEqual(1);
        expect(r.ratePlans.every((rp) => rp.refundable === (rp.cancellationPolicy !== 'non_refundable'))).toBe(true);
      }
    }
  });

  it('prices are whole KRW (hundreds), higher at weekends and in summer, with tax and fees', () => {
    const p = data.property(3)!;
    const room = p.roomTypes[0]!;
    const plan = room.ratePlans[0]!;
    const prices = ['2027-03-03', '2027-03-05', '2027-08-04'].map((d) => data.nightlyPrice(room, plan, d));
    for (const price of prices) expect(price % 100).toBe(0);
    const [wednesday, friday, summer] = prices as [number, number, number];
    expect(friday).toBeGreaterThan(wednesday);
    expect(summer).toBeGreaterThan(wednesday);
    expect(taxAndFees(100_000)).toBe(20_000);
    const stock = Array.from({ length: 60 }, (_, i) => data.baseStock(room, `2027-05-${String((i % 28) + 1).padStart(2, '0')}`));
    expect(stock.every((s) => s >= 0 && s <= room.inventory)).toBe(true);
  });

  it('keeps the figures it has always generated (pinned: a change here changes every market)', () => {
    const p = data.property(3)!;
    expect([p.name, p.address, p.updatedAt.toISOString()]).toEqual(['Blossom Suites Tokyo', '199 Shinjuku, Tokyo', '2026-02-02T16:22:04.133Z']);
    // Rate plan names say their policy and meal plan (issue 19); the figures are as they always were.
    expect(p.roomTypes.map((r) => [r.id, r.basePrice, r.inventory, r.ratePlans.map((rp) => [rp.name['en-US'], rp.cancellationPolicy, rp.mealPlan])])).toEqual([
      [
        '3-r1',
        50300,
        16,
        [
          ['Partially refundable, breakfast included', 'moderate', 'breakfast'],
          ['Non-refundable, half board', 'non_refundable', 'half_board'],
        ],
      ],
      ['3-r2', 75900, 16, [['Free cancellation, room only', 'flexible', 'room_only']]],
    ]);
    const room = p.roomTypes[0]!;
    const figures = ['2027-03-03', '2027-03-05', '2027-07-15', '2027-12-31'].map((night) => [
      data.baseStock(room, night),
      ...room.ratePlans.map((plan) => data.nightlyPrice(room, plan, night)),
    ]);
    expect(figures).toEqual([
      [12, 55000, 55500],
      [2, 68500, 69100],
      [7, 77100, 77800],
      [0, 77100, 77800],
    ]);
    const big = new Dataset(7, 100_000);
    const q = big.scanProperty(99_999)!;
    expect([q.name, q.starRating, q.roomTypes.length]).toEqual(['Lotte Boutique Seoul', 3, 3]);
    expect(big.nightlyPrice(q.roomTypes[0]!, q.roomTypes[0]!.ratePlans[0]!, '2028-02-29')).toBe(164500);
    expect(big.baseStock(q.roomTypes[0]!, '2028-02-29')).toBe(2);
  });

  it('prices a whole stay as night by night', () => {
    const nights = ['2027-01-29', '2027-01-30', '2027-04-02', '2027-08-31', '2027-10-09'].map(nightOf);
    for (const id of [1, 2, 99, 500]) {
      for (const room of data.property(id)!.roomTypes) {
        const jitter = data.stayJitter(room, nights);
        expect(data.stayStock(room, nights)).toEqual(nights.map((n) => data.baseStock(room, n.date)));
        for (const plan of room.ratePlans) {
          expect(nights.map((n, i) => priceOn(room, plan, n, jitter[i]!))).toEqual(nights.map((n) => data.nightlyPrice(room, plan, n.date)));
        }
      }
    }
  });

  it('hands out cached properties frozen, and the same whether cached or not', () => {
    const p = data.property(9)!;
    expect(data.property(9)).toBe(p);
    expect(Object.isFrozen(p) && Object.isFrozen(p.roomTypes) && Object.isFrozen(p.roomTypes[0]!.ratePlans[0])).toBe(true);
    expect(() => {
      (p as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    // A catalog larger than the cache: a walk generates without keeping, with the same result.
    const big = new Dataset(42, 100_000);
    const far = PROPERTY_CACHE_SIZE + 1234;
    expect(big.scanProperty(far)).toEqual(new Dataset(42, 100_000).property(far));
    expect(big.scanProperty(far)).not.toBe(big.scanProperty(far));
    const kept = big.property(far + 1)!;
    expect(big.scanProperty(far + 1)).toBe(kept);
    expect(big.scanProperty(0)).toBeUndefined();
    expect(data.scanProperty(9)).toBe(p);
  });
});
