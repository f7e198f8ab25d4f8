import { describe, expect, it } from 'vitest';
import { CITIES, Dataset, taxAndFees } from '../src/simulator/dataset.js';

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
});
