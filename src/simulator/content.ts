/**
 * The simulator's property content: descriptions, amenities, images, check-in and policies, room
 * details and rate plan names, in the four languages of LANGUAGES (ko-KR always).
 *
 * Everything here is drawn from a random stream of its own (`seed|content|id`, and
 * `seed|content|id|revision` for what a content revision changes), never from the stream that
 * draws the market (cities, rooms, stock, prices), so adding content moved no figure of it.
 *
 * Memory: a generated property is kept in the dataset's LRU (up to PROPERTY_CACHE_SIZE), so what
 * it holds is mostly shared: amenities, images (their id, category, hero flag and caption),
 * occupancies, names and captions are interned objects of fixed tables; image links are spelled
 * at wire time; the long texts (descriptions, policies, check-in instructions, room overviews) are
 * built from templates when read (getters), not stored.
 */

import {
  IMAGE_SIZES,
  IMAGE_WIDTHS,
  LANGUAGES,
  textIn,
  type AmenityGroup,
  type CancellationPolicyType,
  type ImageCategory,
  type ImageSize,
  type Language,
  type LocalizedText,
  type MealPlan,
  type RoomView,
} from '../services/kernel/index.js';
import type { UpstreamProperty } from '../upstream/protocol.js';

type Texts = Readonly<Record<Language, string>>;

const t = (ko: string, en: string, ja: string, zh: string): Texts => Object.freeze({ 'ko-KR': ko, 'en-US': en, 'ja-JP': ja, 'zh-CN': zh });

// ---------------------------------------------------------------------------------------------
// Amenities

export interface Amenity {
  readonly code: string;
  readonly group: AmenityGroup;
  readonly name: LocalizedText;
}

const amenity = (code: string, group: AmenityGroup, name: Texts): Amenity => Object.freeze({ code, group, name });

/** The property amenities a property draws from (6 to 15 each): stable codes, grouped. */
export const PROPERTY_AMENITIES: readonly Amenity[] = Object.freeze([
  amenity('air_conditioning', 'general', t('에어컨', 'Air conditioning', 'エアコン', '空调')),
  amenity('front_desk_24h', 'general', t('24시간 프런트 데스크', '24-hour front desk', '24時間対応フロント', '24小时前台')),
  amenity('luggage_storage', 'general', t('수하물 보관', 'Luggage storage', '荷物預かり', '行李寄存')),
  amenity('elevator', 'general', t('엘리베이터', 'Elevator', 'エレベーター', '电梯')),
  amenity('restaurant', 'general', t('레스토랑', 'Restaurant', 'レストラン', '餐厅')),
  amenity('bar', 'general', t('바', 'Bar', 'バー', '酒吧')),
  amenity('room_service', 'general', t('룸서비스', 'Room service', 'ルームサービス', '客房送餐服务')),
  amenity('laundry', 'general', t('세탁 서비스', 'Laundry service', 'ランドリーサービス', '洗衣服务')),
  amenity('non_smoking', 'general', t('전 객실 금연', 'Non-smoking rooms', '全室禁煙', '无烟客房')),
  amenity('concierge', 'general', t('컨시어지', 'Concierge', 'コンシェルジュ', '礼宾服务')),
  amenity('free_wifi', 'internet', t('무료 Wi-Fi', 'Free Wi-Fi', '無料Wi-Fi', '免费无线网络')),
  amenity('wired_internet', 'internet', t('유선 인터넷', 'Wired internet', '有線インターネット', '有线网络')),
  amenity('business_center', 'internet', t('비즈니스 센터', 'Business centre', 'ビジネスセンター', '商务中心')),
  amenity('free_parking', 'parking', t('무료 주차', 'Free parking', '無料駐車場', '免费停车')),
  amenity('paid_parking', 'parking', t('유료 주차', 'Paid parking', '有料駐車場', '收费停车')),
  amenity('valet_parking', 'parking', t('발레파킹', 'Valet parking', 'バレーパーキング', '代客泊车')),
  amenity('ev_charging', 'parking', t('전기차 충전소', 'EV charging', 'EV充電設備', '电动车充电桩')),
  amenity('fitness_center', 'wellness', t('피트니스 센터', 'Fitness centre', 'フィットネスセンター', '健身中心')),
  amenity('spa', 'wellness', t('스파', 'Spa', 'スパ', '水疗中心')),
  amenity('sauna', 'wellness', t('사우나', 'Sauna', 'サウナ', '桑拿')),
  amenity('indoor_pool', 'wellness', t('실내 수영장', 'Indoor pool', '屋内プール', '室内游泳池')),
  amenity('outdoor_pool', 'wellness', t('야외 수영장', 'Outdoor pool', '屋外プール', '室外游泳池')),
  amenity('hot_spring', 'wellness', t('온천', 'Hot spring bath', '温泉', '温泉')),
  amenity('kids_club', 'family', t('키즈 클럽', "Kids' club", 'キッズクラブ', '儿童俱乐部')),
  amenity('playground', 'family', t('어린이 놀이터', 'Playground', '遊び場', '儿童游乐场')),
  amenity('babysitting', 'family', t('베이비시팅', 'Babysitting', 'ベビーシッター', '托婴服务')),
  amenity('family_rooms', 'family', t('패밀리 룸', 'Family rooms', 'ファミリールーム', '家庭房')),
  amenity('wheelchair_accessible', 'accessibility', t('휠체어 이용 가능', 'Wheelchair accessible', '車いす対応', '无障碍轮椅通道')),
  amenity('accessible_bathroom', 'accessibility', t('장애인용 욕실', 'Accessible bathroom', 'バリアフリーバスルーム', '无障碍浴室')),
  amenity('accessible_parking', 'accessibility', t('장애인 전용 주차', 'Accessible parking', '障がい者用駐車場', '无障碍停车位')),
  amenity('hearing_accessible', 'accessibility', t('청각 장애인 지원 설비', 'Hearing accessible', '聴覚障がい者対応設備', '听障辅助设施')),
]);

const byCode = (list: readonly Amenity[]) => new Map(list.map((a) => [a.code, a]));
const PROPERTY_AMENITY = byCode(PROPERTY_AMENITIES);
const propertyAmenity = (code: string) => PROPERTY_AMENITY.get(code)!;

/** The amenities a room type draws from (air conditioning and Wi-Fi are the property table's). */
export const ROOM_AMENITIES: readonly Amenity[] = Object.freeze([
  propertyAmenity('air_conditioning'),
  propertyAmenity('free_wifi'),
  amenity('minibar', 'general', t('미니바', 'Minibar', 'ミニバー', '迷你吧')),
  amenity('in_room_safe', 'general', t('객실 금고', 'In-room safe', '客室金庫', '客房保险箱')),
  amenity('flat_screen_tv', 'general', t('평면 TV', 'Flat-screen TV', '薄型テレビ', '平板电视')),
  amenity('electric_kettle', 'general', t('전기 주전자', 'Electric kettle', '電気ケトル', '电热水壶')),
  amenity('hair_dryer', 'general', t('헤어드라이어', 'Hair dryer', 'ヘアドライヤー', '吹风机')),
  amenity('bathtub', 'general', t('욕조', 'Bathtub', 'バスタブ', '浴缸')),
  amenity('bathrobes', 'general', t('목욕 가운', 'Bathrobes', 'バスローブ', '浴袍')),
  amenity('work_desk', 'general', t('업무용 책상', 'Work desk', 'デスク', '办公桌')),
  amenity('soundproofing', 'general', t('방음 시설', 'Soundproofing', '防音設備', '隔音设施')),
  amenity('roll_in_shower', 'accessibility', t('휠체어 접근 가능 샤워실', 'Roll-in shower', 'バリアフリーシャワー', '无障碍淋浴间')),
]);

/** What a rate plan can include besides the room. */
export const RATE_PLAN_AMENITIES: readonly Amenity[] = Object.freeze([
  amenity('breakfast_included', 'general', t('조식 포함', 'Breakfast included', '朝食付き', '含早餐')),
  amenity('half_board', 'general', t('하프 보드(조식·석식)', 'Half board (breakfast and dinner)', '朝夕食付き', '半膳（早餐和晚餐）')),
  amenity('full_board', 'general', t('풀 보드(삼식)', 'Full board (three meals)', '3食付き', '全膳（一日三餐）')),
  amenity('free_cancellation', 'general', t('무료 취소', 'Free cancellation', '無料キャンセル', '免费取消')),
]);
const RATE_AMENITY = byCode(RATE_PLAN_AMENITIES);

// ---------------------------------------------------------------------------------------------
// Rate plans: names that say their cancellation policy and meal plan

const POLICY_PHRASES: Record<CancellationPolicyType, Texts> = {
  flexible: t('무료 취소', 'Free cancellation', '無料キャンセル', '免费取消'),
  moderate: t('부분 환불 가능', 'Partially refundable', '一部返金可', '部分可退款'),
  strict: t('엄격한 취소 규정', 'Strict cancellation', '厳格なキャンセル規定', '严格取消政策'),
  non_refundable: t('환불 불가', 'Non-refundable', '返金不可', '不可退款'),
};

const MEAL_PHRASES: Record<MealPlan, Texts> = {
  room_only: t('객실만', 'room only', '素泊まり', '仅客房'),
  breakfast: t('조식 포함', 'breakfast included', '朝食付き', '含早餐'),
  half_board: t('조식·석식 포함', 'half board', '朝夕食付き', '含早晚餐'),
  full_board: t('삼식 포함', 'full board', '3食付き', '含三餐'),
};

/** How a plan's name joins its two phrases, per language. */
const NAME_JOINERS: Record<Language, string> = { 'ko-KR': ', ', 'en-US': ', ', 'ja-JP': '・', 'zh-CN': '，' };


function joinTexts(a: Texts, b: Texts, joiners: Record<Language, string>): Texts {
  return t(...(LANGUAGES.map((l) => `${a[l]}${joiners[l]}${b[l]}`) as [string, string, string, string]));
}

const PLAN_NAMES = {} as Record<CancellationPolicyType, Record<MealPlan, Texts>>;
const PLAN_AMENITIES = {} as Record<CancellationPolicyType, Record<MealPlan, readonly Amenity[]>>;
for (const policy of Object.keys(POLICY_PHRASES) as CancellationPolicyType[]) {
  PLAN_NAMES[policy] = {} as Record<MealPlan, Texts>;
  PLAN_AMENITIES[policy] = {} as Record<MealPlan, readonly Amenity[]>;
  for (const meal of Object.keys(MEAL_PHRASES) as MealPlan[]) {
    PLAN_NAMES[policy][meal] = joinTexts(POLICY_PHRASES[policy], MEAL_PHRASES[meal], NAME_JOINERS);
    const included: Amenity[] = [];
    if (meal === 'breakfast') included.push(RATE_AMENITY.get('breakfast_included')!);
    if (meal === 'half_board') included.push(RATE_AMENITY.get('half_board')!);
    if (meal === 'full_board') included.push(RATE_AMENITY.get('full_board')!);
    if (policy === 'flexible') included.push(RATE_AMENITY.get('free_cancellation')!);
    PLAN_AMENITIES[policy][meal] = Object.freeze(included);
  }
}

/**
 * A rate plan's name, e.g. en-US `Free cancellation, breakfast included`, ko-KR `무료 취소, 조식 포함`:
 * the policy's phrase then the meal plan's, in every language (one shared object per pair).
 */
export function ratePlanName(policy: CancellationPolicyType, meal: MealPlan): LocalizedText {
  return PLAN_NAMES[policy][meal];
}

/** What a rate plan includes: its meals (breakfast_included, half_board, full_board) and free_cancellation when flexible. */
export function ratePlanAmenities(policy: CancellationPolicyType, meal: MealPlan): readonly Amenity[] {
  return PLAN_AMENITIES[policy][meal];
}

/** The phrases plan names are made of, for tests and documentation. */
export const RATE_PLAN_NAME_PARTS = { policy: POLICY_PHRASES, meal: MEAL_PHRASES, joiners: NAME_JOINERS } as const;

// ---------------------------------------------------------------------------------------------
// Rooms

/** Room type names, in the order of the generator's ROOM_NAMES (the en-US spelling of today's names). */
export const ROOM_TYPE_NAMES: readonly Texts[] = [
  t('스탠다드 더블', 'Standard Double', 'スタンダードダブル', '标准大床房'),
  t('슈페리어 트윈', 'Superior Twin', 'スーペリアツイン', '高级双床房'),
  t('디럭스 킹', 'Deluxe King', 'デラックスキング', '豪华特大床房'),
  t('패밀리 룸', 'Family Room', 'ファミリールーム', '家庭房'),
  t('주니어 스위트', 'Junior Suite', 'ジュニアスイート', '小型套房'),
  t('오션뷰 디럭스', 'Ocean View Deluxe', 'オーシャンビューデラックス', '海景豪华房'),
  t('이그제큐티브 스위트', 'Executive Suite', 'エグゼクティブスイート', '行政套房'),
  t('온돌 룸', 'Ondol Room', 'オンドルルーム', '韩式暖炕房'),
  t('슈페리어 더블', 'Superior Double', 'スーペリアダブル', '高级大床房'),
  t('디럭스 트윈', 'Deluxe Twin', 'デラックスツイン', '豪华双床房'),
  t('디럭스 온돌 룸', 'Deluxe Ondol Room', 'デラックスオンドルルーム', '豪华韩式暖炕房'),
  t('패밀리 스위트', 'Family Suite', 'ファミリースイート', '家庭套房'),
];

/** Square metres of each room type name: [smallest, largest]. */
const ROOM_AREAS: readonly (readonly [number, number])[] = [
  [18, 24],
  [22, 28],
  [28, 36],
  [35, 45],
  [40, 50],
  [30, 38],
  [55, 75],
  [20, 30],
  [20, 26],
  [26, 32],
  [28, 36],
  [48, 60],
];

/** Bed group descriptions, by their en-US text (the generator's). */
export const BED_DESCRIPTIONS: Readonly<Record<string, Texts>> = {
  '1 double bed': t('더블 침대 1개', '1 double bed', 'ダブルベッド1台', '1张双人床'),
  '2 single beds': t('싱글 침대 2개', '2 single beds', 'シングルベッド2台', '2张单人床'),
  '1 king bed': t('킹 침대 1개', '1 king bed', 'キングベッド1台', '1张特大床'),
  '1 king bed and 1 single bed': t('킹 침대 1개와 싱글 침대 1개', '1 king bed and 1 single bed', 'キングベッド1台とシングルベッド1台', '1张特大床和1张单人床'),
  '3 single beds': t('싱글 침대 3개', '3 single beds', 'シングルベッド3台', '3张单人床'),
  'Floor mattresses (ondol)': t('온돌 바닥 요', 'Floor mattresses (ondol)', '床に敷く布団（オンドル）', '地铺床垫（暖炕）'),
};

const VIEW_NAMES: Record<RoomView, Texts> = {
  city: t('시티', 'City', 'シティ', '城市'),
  sea: t('바다', 'Sea', 'オーシャン', '海'),
  mountain: t('산', 'Mountain', 'マウンテン', '山'),
  garden: t('정원', 'Garden', 'ガーデン', '花园'),
  river: t('강', 'River', 'リバー', '河'),
  courtyard: t('안뜰', 'Courtyard', '中庭', '庭院'),
  pool: t('수영장', 'Pool', 'プール', '泳池'),
};

export interface AgeCategory {
  readonly category: 'adult' | 'child' | 'infant';
  readonly minAge: number;
  readonly maxAge: number | null;
}

export interface Occupancy {
  readonly maxTotal: number;
  readonly maxAdults: number;
  readonly maxChildren: number;
  readonly ageCategories: readonly AgeCategory[];
}

const AGE_CATEGORIES: readonly AgeCategory[] = Object.freeze([
  Object.freeze({ category: 'adult', minAge: 18, maxAge: null }),
  Object.freeze({ category: 'child', minAge: 2, maxAge: 17 }),
  Object.freeze({ category: 'infant', minAge: 0, maxAge: 1 }),
] as const);

const OCCUPANCIES = new Map<number, Occupancy>();

/**
 * A room's occupancy: as many guests as it sleeps (max_occupancy, which the simulator checks
 * against adults plus children), any of them adults, all but one of them children. Shared.
 */
export function occupancyFor(maxTotal: number): Occupancy {
  let o = OCCUPANCIES.get(maxTotal);
  if (!o) {
    o = Object.freeze({ maxTotal, maxAdults: maxTotal, maxChildren: maxTotal - 1, ageCategories: AGE_CATEGORIES });
    OCCUPANCIES.set(maxTotal, o);
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Images

/** An image as the dataset keeps it; its links are spelled at wire time (imageLinks). */
export interface Image {
  readonly id: string;
  readonly category: ImageCategory;
  readonly hero: boolean;
  readonly caption: LocalizedText;
}

export interface ImageLinkSpec {
  size: ImageSize;
  width: number;
  height: number;
  path: string;
}

/** Pixel height of a size: width × 2 / 3, rounded (thumbnail 200×133, medium 640×427, large 1280×853). */
export function imageHeight(size: ImageSize): number {
  return Math.round((IMAGE_WIDTHS[size] * 2) / 3);
}

/** One link per size of IMAGE_SIZES, smallest first, at the simulator's image route. */
export function imageLinks(propertyId: number, imageId: string): ImageLinkSpec[] {
  return IMAGE_SIZES.map((size) => ({
    size,
    width: IMAGE_WIDTHS[size],
    height: imageHeight(size),
    path: `/images/${propertyId}/${imageId}/${size}.png`,
  }));
}

const CAPTIONS: Record<ImageCategory, readonly Texts[]> = {
  exterior: [t('호텔 외관', 'Exterior', '外観', '酒店外观'), t('저녁의 호텔 외관', 'The hotel at dusk', '夕暮れの外観', '黄昏时的酒店外观')],
  lobby: [t('로비', 'Lobby', 'ロビー', '大堂'), t('로비 라운지', 'Lobby lounge', 'ロビーラウンジ', '大堂酒廊')],
  room: [t('객실', 'Guest room', '客室', '客房'), t('객실 내부', 'Room interior', '客室内', '客房内景')],
  bathroom: [t('욕실', 'Bathroom', 'バスルーム', '浴室'), t('욕실 세면대', 'Bathroom vanity', '洗面台', '浴室洗手台')],
  dining: [t('레스토랑', 'Restaurant', 'レストラン', '餐厅'), t('조식 뷔페', 'Breakfast buffet', '朝食ビュッフェ', '自助早餐')],
  pool: [t('수영장', 'Pool', 'プール', '游泳池'), t('수영장 전경', 'Poolside', 'プールサイド', '泳池边')],
  fitness: [t('피트니스 센터', 'Fitness centre', 'フィットネスセンター', '健身中心'), t('운동 기구', 'Gym equipment', 'トレーニング機器', '健身器材')],
  spa: [t('스파', 'Spa', 'スパ', '水疗'), t('스파 트리트먼트 룸', 'Spa treatment room', 'スパトリートメントルーム', '水疗理疗室')],
  view: [t('전망', 'View', '眺望', '景观'), t('객실에서 바라본 전망', 'View from a room', '客室からの眺め', '客房景观')],
};

const CATEGORY_LIST = Object.keys(CAPTIONS) as ImageCategory[];
const PROPERTY_IMAGE_COUNT = 12;

/** Every property image there can be, shared: [position][category][caption variant]; position 0 is the hero. */
const PROPERTY_IMAGES: readonly Readonly<Record<ImageCategory, readonly Image[]>>[] = Array.from({ length: PROPERTY_IMAGE_COUNT }, (_, i) =>
  Object.fromEntries(
    CATEGORY_LIST.map((category) => [category, CAPTIONS[category].map((caption): Image => Object.freeze({ id: `p${i + 1}`, category, hero: i === 0, caption }))]),
  ) as unknown as Record<ImageCategory, readonly Image[]>,
);

/** A room type's image caption: its name, or its name and what the image shows. */
function roomCaption(name: Texts, category: ImageCategory): Texts {
  if (category === 'bathroom') return t(`${name['ko-KR']} 욕실`, `${name['en-US']} bathroom`, `${name['ja-JP']}のバスルーム`, `${name['zh-CN']}浴室`);
  if (category === 'view') return t(`${name['ko-KR']} 전망`, `View from the ${name['en-US']}`, `${name['ja-JP']}からの眺め`, `${name['zh-CN']}景观`);
  return name;
}

// ---------------------------------------------------------------------------------------------
// Places, chains, phones and languages

export const CITY_NAMES: Readonly<Record<string, Texts>> = {
  Seoul: t('서울', 'Seoul', 'ソウル', '首尔'),
  Busan: t('부산', 'Busan', '釜山', '釜山'),
  Jeju: t('제주', 'Jeju', '済州', '济州'),
  Incheon: t('인천', 'Incheon', '仁川', '仁川'),
  Gyeongju: t('경주', 'Gyeongju', '慶州', '庆州'),
  Gangneung: t('강릉', 'Gangneung', '江陵', '江陵'),
  Daegu: t('대구', 'Daegu', '大邱', '大邱'),
  Tokyo: t('도쿄', 'Tokyo', '東京', '东京'),
  Osaka: t('오사카', 'Osaka', '大阪', '大阪'),
  Fukuoka: t('후쿠오카', 'Fukuoka', '福岡', '福冈'),
  Taipei: t('타이베이', 'Taipei', '台北', '台北'),
  'Hong Kong': t('홍콩', 'Hong Kong', '香港', '香港'),
  Bangkok: t('방콕', 'Bangkok', 'バンコク', '曼谷'),
  Singapore: t('싱가포르', 'Singapore', 'シンガポール', '新加坡'),
  'Da Nang': t('다낭', 'Da Nang', 'ダナン', '岘港'),
};

/** The districts of CITIES in each language (the address keeps the romanized spelling). */
const DISTRICT_NAMES: Readonly<Record<string, Texts>> = {
  'Jung-gu': t('중구', 'Jung-gu', '中区', '中区'),
  'Gangnam-gu': t('강남구', 'Gangnam-gu', '江南区', '江南区'),
  'Mapo-gu': t('마포구', 'Mapo-gu', '麻浦区', '麻浦区'),
  'Jongno-gu': t('종로구', 'Jongno-gu', '鍾路区', '钟路区'),
  'Yongsan-gu': t('용산구', 'Yongsan-gu', '龍山区', '龙山区'),
  'Songpa-gu': t('송파구', 'Songpa-gu', '松坡区', '松坡区'),
  'Haeundae-gu': t('해운대구', 'Haeundae-gu', '海雲台区', '海云台区'),
  'Suyeong-gu': t('수영구', 'Suyeong-gu', '水営区', '水营区'),
  'Busanjin-gu': t('부산진구', 'Busanjin-gu', '釜山鎮区', '釜山镇区'),
  'Jeju-si': t('제주시', 'Jeju-si', '済州市', '济州市'),
  'Seogwipo-si': t('서귀포시', 'Seogwipo-si', '西帰浦市', '西归浦市'),
  'Aewol-eup': t('애월읍', 'Aewol-eup', '涯月邑', '涯月邑'),
  'Yeonsu-gu': t('연수구', 'Yeonsu-gu', '延寿区', '延寿区'),
  'Namdong-gu': t('남동구', 'Namdong-gu', '南洞区', '南洞区'),
  'Hwangnam-dong': t('황남동', 'Hwangnam-dong', '皇南洞', '皇南洞'),
  'Bomun-ro': t('보문로', 'Bomun-ro', '普門路', '普门路'),
  Gyeongpo: t('경포', 'Gyeongpo', '鏡浦', '镜浦'),
  Jumunjin: t('주문진', 'Jumunjin', '注文津', '注文津'),
  'Suseong-gu': t('수성구', 'Suseong-gu', '寿城区', '寿城区'),
  Shinjuku: t('신주쿠', 'Shinjuku', '新宿', '新宿'),
  Shibuya: t('시부야', 'Shibuya', '渋谷', '涩谷'),
  Ginza: t('긴자', 'Ginza', '銀座', '银座'),
  Asakusa: t('아사쿠사', 'Asakusa', '浅草', '浅草'),
  Namba: t('난바', 'Namba', '難波', '难波'),
  Umeda: t('우메다', 'Umeda', '梅田', '梅田'),
  Shinsaibashi: t('신사이바시', 'Shinsaibashi', '心斎橋', '心斋桥'),
  Hakata: t('하카타', 'Hakata', '博多', '博多'),
  Tenjin: t('텐진', 'Tenjin', '天神', '天神'),
  Xinyi: t('신이', 'Xinyi', '信義', '信义'),
  Zhongshan: t('중산', 'Zhongshan', '中山', '中山'),
  'Da-an': t('다안', 'Da-an', '大安', '大安'),
  'Tsim Sha Tsui': t('침사추이', 'Tsim Sha Tsui', '尖沙咀', '尖沙咀'),
  Central: t('센트럴', 'Central', 'セントラル', '中环'),
  'Causeway Bay': t('코즈웨이베이', 'Causeway Bay', '銅鑼湾', '铜锣湾'),
  Sukhumvit: t('수쿰빗', 'Sukhumvit', 'スクンビット', '素坤逸'),
  Silom: t('실롬', 'Silom', 'シーロム', '是隆'),
  Riverside: t('리버사이드', 'Riverside', 'リバーサイド', '河畔'),
  'Marina Bay': t('마리나베이', 'Marina Bay', 'マリーナベイ', '滨海湾'),
  Orchard: t('오차드', 'Orchard', 'オーチャード', '乌节'),
  Sentosa: t('센토사', 'Sentosa', 'セントーサ', '圣淘沙'),
  'My Khe': t('미케', 'My Khe', 'ミーケー', '美溪'),
  'Son Tra': t('선짜', 'Son Tra', 'ソンチャー', '山茶'),
  'Hai Chau': t('하이쩌우', 'Hai Chau', 'ハイチャウ', '海州'),
};

/** Cities by the sea, where rooms may look onto it. */
const COASTAL = new Set(['Busan', 'Jeju', 'Incheon', 'Gangneung', 'Hong Kong', 'Singapore', 'Da Nang', 'Fukuoka']);
const RIVER = new Set(['Seoul', 'Bangkok', 'Da Nang', 'Tokyo', 'Osaka']);

/** What kind of place each name word of the generator's BRANDS makes. */
const KINDS = {
  hotel: t('호텔', 'hotel', 'ホテル', '酒店'),
  residence: t('레지던스', 'serviced residence', 'レジデンス', '服务式公寓'),
  resort: t('리조트', 'resort', 'リゾート', '度假村'),
  hanok: t('한옥 숙소', 'hanok guesthouse', '韓屋ステイ', '韩屋民宿'),
  inn: t('인', 'inn', '旅館', '旅馆'),
  boutique: t('부티크 호텔', 'boutique hotel', 'ブティックホテル', '精品酒店'),
} as const;
type Kind = keyof typeof KINDS;
const KIND_OF_BRAND_WORD: Record<string, Kind> = {
  Grand: 'hotel',
  Hotel: 'hotel',
  Stay: 'boutique',
  Residence: 'residence',
  Suites: 'hotel',
  Resort: 'resort',
  Hanok: 'hanok',
  Inn: 'inn',
  Boutique: 'boutique',
  Palace: 'hotel',
};
const KIND_SENTENCES: Record<Kind, Texts> = {
  hotel: t('비즈니스와 여행 모두에 편리한 숙소입니다.', 'It suits business and leisure travellers alike.', 'ビジネスにも観光にも便利な宿泊施設です。', '商务与休闲旅客皆宜。'),
  residence: t(
    '주방이 딸린 객실에서 장기 투숙도 편안하게 즐길 수 있습니다.',
    'Rooms with kitchenettes make longer stays easy.',
    'キッチン付きの客室で長期滞在も快適です。',
    '客房配有小厨房，适合长住。',
  ),
  resort: t('여유로운 휴식을 위한 리조트 시설을 갖추고 있습니다.', 'It is made for a relaxing getaway.', 'ゆったりとくつろげるリゾートです。', '是放松度假的理想之选。'),
  hanok: t('전통 한옥의 정취를 느낄 수 있습니다.', 'Guests stay in a traditional Korean house.', '伝統的な韓屋の趣を味わえます。', '可体验韩国传统韩屋的韵味。'),
  inn: t('아담하고 아늑한 숙소입니다.', 'It is small, simple and friendly.', 'こぢんまりとした居心地のよい宿です。', '小巧温馨。'),
  boutique: t('개성 있는 디자인의 객실을 갖추고 있습니다.', 'Each room is individually designed.', '個性的なデザインの客室を備えています。', '每间客房设计独具特色。'),
};

const CHAINS: readonly { id: string; name: string; brands: readonly { id: string; name: string }[] }[] = [
  { id: 'hanbit', name: 'Hanbit Hospitality', brands: [{ id: 'hanbit-signature', name: 'Hanbit Signature' }, { id: 'hanbit-stay', name: 'Hanbit Stay' }] },
  { id: 'aurora', name: 'Aurora Hotels Group', brands: [{ id: 'aurora-grand', name: 'Aurora Grand' }, { id: 'aurora-express', name: 'Aurora Express' }] },
  { id: 'seaside', name: 'Seaside Resorts', brands: [{ id: 'seaside-collection', name: 'Seaside Collection' }, { id: 'seaside-family', name: 'Seaside Family' }] },
  { id: 'mirae', name: 'Mirae Hotels', brands: [{ id: 'mirae-premier', name: 'Mirae Premier' }, { id: 'mirae-city', name: 'Mirae City' }] },
  { id: 'pacific-crown', name: 'Pacific Crown Hotels', brands: [{ id: 'crown-select', name: 'Crown Select' }] },
];
const CHAIN_REFS = CHAINS.map((c) => Object.freeze({ id: c.id, name: c.name }));
for (const c of CHAINS) for (const b of c.brands) Object.freeze(b);

/** Country code and the city's area code. */
const PHONE_PREFIXES: Readonly<Record<string, string>> = {
  Seoul: '+82-2',
  Busan: '+82-51',
  Jeju: '+82-64',
  Incheon: '+82-32',
  Gyeongju: '+82-54',
  Gangneung: '+82-33',
  Daegu: '+82-53',
  Tokyo: '+81-3',
  Osaka: '+81-6',
  Fukuoka: '+81-92',
  Taipei: '+886-2',
  'Hong Kong': '+852',
  Bangkok: '+66-2',
  Singapore: '+65',
  'Da Nang': '+84-236',
};

/** Languages the staff speak, by country: always these, then some of the extras. */
const SPOKEN: Readonly<Record<string, { always: readonly string[]; extra: readonly string[] }>> = {
  KR: { always: ['ko', 'en'], extra: ['ja', 'zh'] },
  JP: { always: ['ja', 'en'], extra: ['ko', 'zh'] },
  TW: { always: ['zh', 'en'], extra: ['ja', 'ko'] },
  HK: { always: ['zh', 'en'], extra: ['ja'] },
  TH: { always: ['th', 'en'], extra: ['zh', 'ko'] },
  SG: { always: ['en', 'zh', 'ms'], extra: ['ta'] },
  VN: { always: ['vi', 'en'], extra: ['ko', 'zh'] },
};

// ---------------------------------------------------------------------------------------------
// Drawing a property's content

/** The facts of a property its content is written from (drawn by the market's stream). */
export interface PropertyFacts {
  id: number;
  name: string;
  city: string;
  country: string;
  district: string;
  /** The word of BRANDS in its name (Grand, Resort, Hanok...). */
  brandWord: string;
  starRating: number;
  /** For each room type: the index of its name in ROOM_TYPE_NAMES and how many it sleeps. */
  rooms: readonly { nameIndex: number; maxOccupancy: number }[];
}

/** A property's stored content facts: shared objects, numbers and a few short strings. */
export interface PropertyContent {
  readonly revision: number;
  readonly amenities: readonly Amenity[];
  /** The hero first, then the gallery. */
  readonly images: readonly Image[];
  readonly checkinBegin: string;
  readonly checkinEnd: string | null;
  readonly checkinMinAge: number;
  readonly checkoutTime: string;
  readonly phone: string;
  readonly chain: { readonly id: string; readonly name: string } | null;
  readonly brand: { readonly id: string; readonly name: string } | null;
  readonly spokenLanguages: readonly string[];
  readonly review: { readonly score: number; readonly count: number } | null;
  /** Which of the templates the texts use, and which translations are left out. */
  readonly variants: TextVariants;
}

/** A property's content and its room types' (the dataset keeps the rooms' on its room types). */
export interface DrawnContent {
  readonly content: PropertyContent;
  readonly rooms: readonly RoomContent[];
}

export interface TextVariants {
  readonly headline: number;
  readonly children: number;
  readonly pets: number;
  /** KRW per night; 0: no extra beds. */
  readonly extraBedFee: number;
  readonly knowBeforeYouGo: number;
  /** zh-CN left out of descriptions.dining (a translation the provider does not have). */
  readonly noZhDining: boolean;
  /** ja-JP left out of policies.pets. */
  readonly noJaPets: boolean;
}

export interface RoomContent {
  readonly name: LocalizedText;
  readonly areaSqm: number;
  readonly views: readonly RoomView[];
  readonly amenities: readonly Amenity[];
  readonly images: readonly Image[];
  readonly occupancy: Occupancy;
}

const GALLERY_ALWAYS: readonly ImageCategory[] = ['lobby', 'room', 'bathroom', 'dining', 'view'];
const ROOM_IMAGE_CATEGORIES: readonly ImageCategory[] = ['room', 'bathroom', 'view'];
/** Room types a property has at most (the generator draws 2 to 5). */
const MAX_ROOMS = 8;

/** Every room image there can be, shared: [room position][room name][image position]. */
const ROOM_IMAGES: readonly (readonly (readonly Image[])[])[] = Array.from({ length: MAX_ROOMS }, (_, r) =>
  ROOM_TYPE_NAMES.map((name) =>
    ROOM_IMAGE_CATEGORIES.map((category, k) => Object.freeze({ id: `r${r + 1}-${k + 1}`, category, hero: false, caption: roomCaption(name, category) })),
  ),
);
const ROOM_IMAGE_LISTS: readonly (readonly (readonly (readonly Image[])[])[])[] = ROOM_IMAGES.map((byName) =>
  byName.map((images) => [1, 2, 3].map((n) => Object.freeze(images.slice(0, n)))),
);

function pickIndex(random: () => number, n: number): number {
  return Math.floor(random() * n);
}

/** k distinct items of `items` (k at most its length), in table order: selection sampling, one draw per item looked at. */
function sample<T>(random: () => number, items: readonly T[], k: number): T[] {
  const out: T[] = [];
  for (let i = 0; i < items.length && out.length < k; i++) {
    if (random() * (items.length - i) < k - out.length) out.push(items[i]!);
  }
  return out;
}

function hasCode(amenities: readonly Amenity[], code: string): boolean {
  for (const a of amenities) if (a.code === code) return true;
  return false;
}

const INTERNED_LISTS = new Map<string, readonly string[]>();
/** One shared frozen array per distinct list of short codes (views, languages): few distinct ones exist. */
function internList<T extends string>(items: T[]): readonly T[] {
  const key = items.join(',');
  let v = INTERNED_LISTS.get(key);
  if (!v) {
    v = Object.freeze(items);
    INTERNED_LISTS.set(key, v);
  }
  return v as readonly T[];
}

/**
 * Draws a property's content. `random` is the content stream (`seed|content|id`), `revised` the
 * stream of its revision (`seed|content|id|revision`): what a revision changes (the headline's
 * template, new reviews) is drawn from it.
 */
export function drawContent(facts: PropertyFacts, random: () => number, revised: () => number, revision: number): DrawnContent {
  // Amenities: 6 to 15 of the table, in table order.
  const amenities = Object.freeze(sample(random, PROPERTY_AMENITIES, 6 + pickIndex(random, 10)));
  const has = (code: string) => hasCode(amenities, code);

  // Images: the hero (the exterior, or the pool of a resort that has one), then 4 to 8 more.
  const pool = has('outdoor_pool') || has('indoor_pool');
  const kind = KIND_OF_BRAND_WORD[facts.brandWord] ?? 'hotel';
  const heroCategory: ImageCategory = kind === 'resort' && pool ? 'pool' : 'exterior';
  const candidates = [...GALLERY_ALWAYS];
  if (heroCategory !== 'exterior') candidates.unshift('exterior');
  if (pool && heroCategory !== 'pool') candidates.push('pool');
  if (has('fitness_center')) candidates.push('fitness');
  if (has('spa') || has('sauna')) candidates.push('spa');
  const gallery = sample(random, candidates, Math.min(candidates.length, 4 + pickIndex(random, 5)));
  const images: Image[] = [PROPERTY_IMAGES[0]![heroCategory][pickIndex(random, 2)]!];
  for (let i = 0; i < gallery.length; i++) images.push(PROPERTY_IMAGES[i + 1]![gallery[i]!][pickIndex(random, 2)]!);

  // Check-in and check-out.
  const star = facts.starRating;
  const checkinBegin = star >= 4 ? '15:00' : (['14:00', '15:00', '16:00'] as const)[pickIndex(random, 3)]!;
  const lateEnd = (['22:00', '23:00', '00:00'] as const)[pickIndex(random, 3)]!;
  const checkinEnd = has('front_desk_24h') ? null : lateEnd;
  const checkoutTime = star >= 4 ? (['11:00', '12:00'] as const)[pickIndex(random, 2)]! : (['10:00', '11:00'] as const)[pickIndex(random, 2)]!;
  const checkinMinAge = facts.country === 'KR' ? 19 : 18;

  // Phone, chain and brand, languages, reviews.
  const local = `${1000 + pickIndex(random, 9000)}-${1000 + pickIndex(random, 9000)}`;
  const phone = `${PHONE_PREFIXES[facts.city] ?? '+82-2'}-${local}`;
  const chainRoll = random();
  const chainIndex = pickIndex(random, CHAINS.length);
  const brandRoll = random();
  const chain = chainRoll < 0.55 ? CHAIN_REFS[chainIndex]! : null;
  const brands = CHAINS[chainIndex]!.brands;
  const brand = chain && brandRoll < 0.85 ? brands[Math.floor(brandRoll * brands.length) % brands.length]! : null;
  const spoken = SPOKEN[facts.country] ?? { always: ['en'], extra: [] };
  const spokenLanguages = internList([...spoken.always, ...spoken.extra.filter(() => random() < 0.45)]);
  const reviewed = random() >= 0.08;
  const score = Math.min(10, Math.round((5.2 + star * 0.7 + random() * 1.8) * 10) / 10);
  const baseCount = 3 + Math.floor(random() ** 2 * 4000);

  // Text templates and left-out translations.
  const headlineBase = pickIndex(random, HEADLINES.length);
  const variants: TextVariants = Object.freeze({
    headline: (headlineBase + revision) % HEADLINES.length,
    children: pickIndex(random, CHILDREN_POLICIES.length),
    pets: pickIndex(random, PET_POLICIES.length),
    extraBedFee: has('family_rooms') || star >= 3 ? (2 + pickIndex(random, 5)) * 10_000 : 0,
    knowBeforeYouGo: pickIndex(random, KNOW_BEFORE.length),
    noZhDining: random() < 0.2,
    noJaPets: random() < 0.25,
  });

  // A revision brings new reviews (and a new headline, above).
  let count = baseCount;
  for (let r = 0; r < revision; r++) count += 1 + Math.floor(revised() * 40);
  const review = reviewed ? Object.freeze({ score, count }) : null;

  // Room types.
  const roomAmenityPool = ROOM_AMENITIES.slice(2);
  const rooms: RoomContent[] = facts.rooms.map((room, r) => {
    const name = ROOM_TYPE_NAMES[room.nameIndex]!;
    const [low, high] = ROOM_AREAS[room.nameIndex]!;
    const areaSqm = low + pickIndex(random, high - low + 1) + (star >= 4 ? 4 : 0);
    const views: RoomView[] = [];
    // Ocean View Deluxe (5) looks onto the sea.
    if (room.nameIndex === 5 && COASTAL.has(facts.city)) views.push('sea');
    else {
      const options: RoomView[] = ['city', 'garden', 'courtyard', 'mountain'];
      if (COASTAL.has(facts.city)) options.push('sea');
      if (RIVER.has(facts.city)) options.push('river');
      if (pool) options.push('pool');
      views.push(...sample(random, options, 1 + pickIndex(random, 2)));
    }
    const extras = sample(random, roomAmenityPool, 3 + pickIndex(random, 5));
    const roomAmenities = Object.freeze([ROOM_AMENITIES[0]!, ...(random() < 0.9 ? [ROOM_AMENITIES[1]!] : []), ...extras]);
    const roomImages = ROOM_IMAGE_LISTS[r]![room.nameIndex]![pickIndex(random, 3)]!;
    return Object.freeze({ name, areaSqm, views: internList(views), amenities: roomAmenities, images: roomImages, occupancy: occupancyFor(room.maxOccupancy) });
  });

  const content: PropertyContent = Object.freeze({
    revision,
    amenities,
    images: Object.freeze(images),
    checkinBegin,
    checkinEnd,
    checkinMinAge,
    checkoutTime,
    phone,
    chain,
    brand,
    spokenLanguages,
    review,
    variants,
  });
  return { content, rooms };
}

// ---------------------------------------------------------------------------------------------
// Texts, written when read from the property's facts and content

/** What the text templates read (the dataset's property is one). */
export interface TextSource {
  readonly name: string;
  readonly city: string;
  readonly address: string;
  readonly starRating: number;
  readonly district: string;
  readonly brandWord: string;
  /** Kilometres from the city's centre, one decimal. */
  readonly distanceKm: number;
  readonly content: PropertyContent;
  readonly roomTypes: readonly Pick<RoomContent, 'name' | 'areaSqm' | 'occupancy'>[];
}

type Template = (s: TextSource, l: Language) => string;

/** A text in every language from a template, leaving out the languages in `missing`. */
function write(s: TextSource, template: Template, missing?: Language): LocalizedText {
  const out: Record<string, string> = {};
  for (const l of LANGUAGES) if (l !== missing) out[l] = template(s, l);
  return out as LocalizedText;
}

const cityIn = (s: TextSource, l: Language) => CITY_NAMES[s.city]?.[l] ?? s.city;
const districtIn = (s: TextSource, l: Language) => DISTRICT_NAMES[s.district]?.[l] ?? s.district;
const kindIn = (s: TextSource, l: Language) => KINDS[KIND_OF_BRAND_WORD[s.brandWord] ?? 'hotel'][l];
const starIn = (s: TextSource, l: Language) =>
  ({ 'ko-KR': `${s.starRating}성급`, 'en-US': `${s.starRating}-star`, 'ja-JP': `${s.starRating}つ星`, 'zh-CN': `${s.starRating}星级` })[l];
const LIST_JOINERS: Record<Language, string> = { 'ko-KR': ', ', 'en-US': ', ', 'ja-JP': '、', 'zh-CN': '、' };
const listIn = (items: readonly Texts[] | readonly LocalizedText[], l: Language) => items.map((i) => textIn(i, l)).join(LIST_JOINERS[l]);
const lowerFirst = (text: string) => (/^[A-Z][a-z]/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text);

const HEADLINES: readonly Template[] = [
  (s, l) =>
    ({
      'ko-KR': `${cityIn(s, l)} ${districtIn(s, l)}의 ${starIn(s, l)} ${kindIn(s, l)}`,
      'en-US': `${starIn(s, l)} ${kindIn(s, l)} in ${districtIn(s, l)}, ${cityIn(s, l)}`,
      'ja-JP': `${cityIn(s, l)}・${districtIn(s, l)}の${starIn(s, l)}${kindIn(s, l)}`,
      'zh-CN': `${cityIn(s, l)}${districtIn(s, l)}的${starIn(s, l)}${kindIn(s, l)}`,
    })[l],
  (s, l) =>
    ({
      'ko-KR': `${cityIn(s, l)} 시내 중심에서 ${s.distanceKm}km, ${s.name}`,
      'en-US': `${s.name}, ${s.distanceKm} km from central ${cityIn(s, l)}`,
      'ja-JP': `${cityIn(s, l)}中心部から${s.distanceKm}km、${s.name}`,
      'zh-CN': `${s.name}，距${cityIn(s, l)}市中心${s.distanceKm}公里`,
    })[l],
  (s, l) => {
    const [a, b] = s.content.amenities.slice(-2).map((x) => x.name[l] ?? x.name['ko-KR']) as [string, string];
    return {
      'ko-KR': `${a}·${b} 완비, ${cityIn(s, l)}의 ${kindIn(s, l)}`,
      'en-US': `${cityIn(s, l)} ${kindIn(s, l)} with ${lowerFirst(a)} and ${lowerFirst(b)}`,
      'ja-JP': `${a}・${b}完備の${cityIn(s, l)}の${kindIn(s, l)}`,
      'zh-CN': `${cityIn(s, l)}${kindIn(s, l)}，设有${a}和${b}`,
    }[l];
  },
];

const general: Template = (s, l) => {
  const rooms = s.roomTypes.length;
  const count = s.content.amenities.length;
  const kind = KIND_SENTENCES[KIND_OF_BRAND_WORD[s.brandWord] ?? 'hotel'][l];
  return {
    'ko-KR': `${cityIn(s, l)} ${districtIn(s, l)}에 자리한 ${starIn(s, l)} ${kindIn(s, l)} ${s.name}에서는 ${rooms}가지 객실 타입과 ${count}가지 편의 시설을 만나 보실 수 있습니다. ${kind}`,
    'en-US': `${s.name} is a ${starIn(s, l)} ${kindIn(s, l)} in ${districtIn(s, l)}, ${cityIn(s, l)}, with ${rooms} room types and ${count} amenities. ${kind}`,
    'ja-JP': `${s.name}は${cityIn(s, l)}・${districtIn(s, l)}にある${starIn(s, l)}の${kindIn(s, l)}で、${rooms}種類の客室タイプと${count}種類の設備を備えています。${kind}`,
    'zh-CN': `${s.name}是一家位于${cityIn(s, l)}${districtIn(s, l)}的${starIn(s, l)}${kindIn(s, l)}，拥有${rooms}种房型和${count}项设施。${kind}`,
  }[l];
};

const location: Template = (s, l) =>
  ({
    'ko-KR': `${districtIn(s, l)}에 위치하며 ${cityIn(s, l)} 시내 중심에서 약 ${s.distanceKm}km 떨어져 있습니다. 주소: ${s.address}.`,
    'en-US': `Located in ${districtIn(s, l)}, about ${s.distanceKm} km from the centre of ${cityIn(s, l)}. Address: ${s.address}.`,
    'ja-JP': `${districtIn(s, l)}に位置し、${cityIn(s, l)}の中心部から約${s.distanceKm}kmです。住所：${s.address}。`,
    'zh-CN': `位于${districtIn(s, l)}，距${cityIn(s, l)}市中心约${s.distanceKm}公里。地址：${s.address}。`,
  })[l];

const roomsText: Template = (s, l) => {
  const rooms = s.roomTypes;
  const names = listIn(rooms.map((r) => r.name), l);
  const areas = rooms.map((r) => r.areaSqm);
  const [min, max] = [Math.min(...areas), Math.max(...areas)];
  const sleeps = Math.max(...rooms.map((r) => r.occupancy.maxTotal));
  return {
    'ko-KR': `객실 타입: ${names}. 객실 면적은 ${min}~${max}㎡이며 최대 ${sleeps}명까지 투숙할 수 있습니다.`,
    'en-US': `Room types: ${names}. Rooms measure ${min} to ${max} m² and sleep up to ${sleeps} guests.`,
    'ja-JP': `客室タイプ：${names}。客室面積は${min}〜${max}㎡で、最大${sleeps}名まで宿泊できます。`,
    'zh-CN': `房型：${names}。客房面积${min}至${max}平方米，最多可入住${sleeps}人。`,
  }[l];
};

const dining: Template = (s, l) => {
  const has = (code: string) => s.content.amenities.some((a) => a.code === code);
  const restaurant = has('restaurant');
  const bar = has('bar');
  if (restaurant && bar) {
    return t(
      '레스토랑과 바를 운영하며 매일 아침 조식을 제공합니다.',
      'The on-site restaurant serves breakfast daily, and the bar is open in the evening.',
      '館内のレストランでは毎朝朝食を提供し、夜はバーも営業しています。',
      '酒店餐厅每天供应早餐，酒吧晚间营业。',
    )[l];
  }
  if (restaurant) return t('레스토랑에서 매일 아침 조식을 제공합니다.', 'The on-site restaurant serves breakfast daily.', '館内のレストランで毎朝朝食を提供しています。', '酒店餐厅每天供应早餐。')[l];
  if (bar) return t('바에서 가벼운 음료와 간식을 즐길 수 있습니다.', 'The bar serves drinks and light snacks.', 'バーでドリンクと軽食をお楽しみいただけます。', '酒吧提供饮品和小食。')[l];
  return {
    'ko-KR': `숙소 내 레스토랑은 없지만 ${districtIn(s, l)} 주변에 다양한 음식점이 있습니다.`,
    'en-US': `There is no restaurant on site; ${districtIn(s, l)} has plenty of places to eat nearby.`,
    'ja-JP': `館内にレストランはありませんが、${districtIn(s, l)}周辺には飲食店が多数あります。`,
    'zh-CN': `酒店内无餐厅，${districtIn(s, l)}周边有众多餐馆。`,
  }[l];
};

const amenitiesText: Template = (s, l) => {
  const names = listIn(s.content.amenities.map((a) => a.name), l);
  return { 'ko-KR': `주요 시설: ${names}.`, 'en-US': `Amenities: ${names}.`, 'ja-JP': `主な設備：${names}。`, 'zh-CN': `主要设施：${names}。` }[l];
};

const instructions: Template = (s, l) => {
  const end = s.content.checkinEnd;
  const phone = s.content.phone;
  const first = t(
    '체크인 시 사진이 있는 신분증과 예약 시 사용한 카드를 제시해 주세요.',
    'Please present a photo ID and the card used to book at check-in.',
    'チェックイン時に写真付き身分証明書と予約時のカードをご提示ください。',
    '办理入住时请出示带照片的身份证件及预订时使用的银行卡。',
  )[l];
  const second =
    end === null
      ? t(' 프런트 데스크는 24시간 운영합니다.', ' The front desk is open 24 hours.', 'フロントは24時間対応です。', '前台24小时服务。')[l]
      : {
          'ko-KR': ` ${end} 이후 도착 예정인 경우 숙소(${phone})에 미리 연락해 주세요.`,
          'en-US': ` If you expect to arrive after ${end}, please contact the property in advance at ${phone}.`,
          'ja-JP': `${end}以降に到着予定の場合は、事前に施設（${phone}）までご連絡ください。`,
          'zh-CN': `如预计${end}以后抵达，请提前致电酒店（${phone}）。`,
        }[l];
  return first + second;
};

const CHILDREN_POLICIES: readonly Texts[] = [
  t(
    '모든 연령의 어린이가 투숙할 수 있습니다. 기존 침대를 사용하는 17세 이하 어린이는 무료입니다.',
    'Children of all ages are welcome. Children aged 17 and under stay free when using existing beds.',
    'お子様は何歳でもご宿泊いただけます。既存のベッドを利用する17歳以下のお子様は無料です。',
    '欢迎所有年龄段的儿童入住。17岁及以下儿童使用现有床铺免费。',
  ),
  t(
    '어린이 투숙이 가능합니다. 2세 미만 유아는 무료이며 유아용 침대는 요청 시 제공됩니다.',
    'Children are welcome. Infants under 2 stay free; cots are available on request.',
    'お子様のご宿泊も可能です。2歳未満の乳幼児は無料で、ベビーベッドはリクエストに応じてご用意します。',
    '欢迎儿童入住。2岁以下婴儿免费，可应要求提供婴儿床。',
  ),
];

const PET_POLICIES: readonly Texts[] = [
  t('반려동물은 동반할 수 없습니다.', 'Pets are not allowed.', 'ペットの同伴はできません。', '不允许携带宠物。'),
  t(
    '요청 시 반려동물을 동반할 수 있으며 추가 요금이 부과될 수 있습니다.',
    'Pets are allowed on request; charges may apply.',
    'リクエストに応じてペット同伴可（追加料金がかかる場合があります）。',
    '可应要求携带宠物，可能需支付额外费用。',
  ),
  t('보조견만 동반할 수 있습니다.', 'Only assistance animals are allowed.', '補助犬のみ同伴できます。', '仅允许携带辅助犬。'),
];

const KNOW_BEFORE: readonly Texts[] = [
  t('객실 내 흡연 시 청소비가 부과됩니다.', 'Smoking in rooms incurs a cleaning fee.', '客室内で喫煙された場合は清掃料金がかかります。', '在客房内吸烟将收取清洁费。'),
  t('22:00부터 07:00까지는 정숙 시간입니다.', 'Quiet hours are from 22:00 to 07:00.', '22:00から7:00までは静粛時間です。', '22:00至07:00为安静时段。'),
  t('주차 공간이 한정되어 있어 사전 요청이 필요합니다.', 'Parking is limited and must be requested in advance.', '駐車スペースに限りがあるため、事前のリクエストが必要です。', '停车位有限，需提前申请。'),
];
const DEPOSIT = t('체크인 시 보증금이 청구될 수 있습니다.', 'A deposit may be collected at check-in.', 'チェックイン時にデポジットをお預かりする場合があります。', '入住时可能需要支付押金。');
const SPACERS: Record<Language, string> = { 'ko-KR': ' ', 'en-US': ' ', 'ja-JP': '', 'zh-CN': '' };

/** KRW with thousands separators (the same in every language). */
const krw = (amount: number) => String(amount).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

const extraBeds: Template = (s, l) => {
  const fee = s.content.variants.extraBedFee;
  if (fee === 0) return t('엑스트라 베드는 제공되지 않습니다.', 'Extra beds are not available.', 'エキストラベッドのご用意はありません。', '不提供加床。')[l];
  return {
    'ko-KR': `엑스트라 베드는 요청 시 1박당 ${krw(fee)}원에 제공됩니다.`,
    'en-US': `Extra beds are available on request for KRW ${krw(fee)} per night.`,
    'ja-JP': `エキストラベッドはリクエストに応じて1泊${krw(fee)}ウォンでご用意します。`,
    'zh-CN': `可应要求提供加床，每晚${krw(fee)}韩元。`,
  }[l];
};

/** A property's descriptions, as the protocol carries them. */
export type Descriptions = UpstreamProperty['descriptions'];

export interface Policies {
  children: LocalizedText;
  pets: LocalizedText;
  extraBeds: LocalizedText;
  knowBeforeYouGo: LocalizedText;
}

export function descriptionsOf(s: TextSource): Descriptions {
  const v = s.content.variants;
  return {
    headline: write(s, HEADLINES[v.headline]!),
    general: write(s, general),
    location: write(s, location),
    rooms: write(s, roomsText),
    dining: write(s, dining, v.noZhDining ? 'zh-CN' : undefined),
    amenities: write(s, amenitiesText),
  };
}

export function policiesOf(s: TextSource): Policies {
  const v = s.content.variants;
  const pets = PET_POLICIES[v.pets]!;
  return {
    children: CHILDREN_POLICIES[v.children]!,
    pets: v.noJaPets ? { 'ko-KR': pets['ko-KR'], 'en-US': pets['en-US'], 'zh-CN': pets['zh-CN'] } : pets,
    extraBeds: write(s, extraBeds),
    knowBeforeYouGo: write(s, (_, l) => DEPOSIT[l] + SPACERS[l] + KNOW_BEFORE[v.knowBeforeYouGo]![l]),
  };
}

export function checkinInstructionsOf(s: TextSource): LocalizedText {
  return write(s, instructions);
}

/** A room type's overview: its size, beds, how many it sleeps and its view. */
export function roomOverviewOf(room: Pick<RoomContent, 'name' | 'areaSqm' | 'views' | 'occupancy'>, bed: LocalizedText): LocalizedText {
  const out: Record<string, string> = {};
  const views = (l: Language) => room.views.map((v) => VIEW_NAMES[v][l]);
  for (const l of LANGUAGES) {
    const name = room.name[l] ?? room.name['ko-KR'];
    const beds = bed[l] ?? bed['ko-KR'];
    const max = room.occupancy.maxTotal;
    out[l] = {
      'ko-KR': `${room.areaSqm}㎡ 크기의 ${name} 객실로, ${beds} 구성이며 최대 ${max}명까지 투숙할 수 있습니다. ${views(l).join('·')} 전망입니다.`,
      'en-US': `The ${name} measures ${room.areaSqm} m², has ${lowerFirst(beds)} and sleeps up to ${max}. ${views(l).join(' and ')} view.`,
      'ja-JP': `${name}は広さ${room.areaSqm}㎡、${beds}の客室で、最大${max}名様までご宿泊いただけます。${views(l).join('・')}ビューです。`,
      'zh-CN': `${name}面积${room.areaSqm}平方米，配有${beds}，最多可入住${max}人，享有${views(l).join('和')}景观。`,
    }[l];
  }
  return out as LocalizedText;
}

/** Kilometres between two points (haversine), one decimal. */
export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const a = Math.sin(((lat2 - lat1) * rad) / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2;
  return Math.round(2 * 6371 * Math.asin(Math.sqrt(a)) * 10) / 10;
}
