/** Intl and the locale methods (localeCompare, toLocaleString, …) in the workflow sandbox, which QuickJS lacks, in the en-US forms Claude Code's runtime gives. */

/**
 * JavaScript the prelude runs first in every context: `Intl` (NumberFormat, Collator, DateTimeFormat,
 * PluralRules, ListFormat, RelativeTimeFormat) and the built-ins' locale methods over it
 * (`Number`/`BigInt`'s `toLocaleString`, `String`'s `localeCompare`, `Date`'s `toLocale*String`), as the
 * CLI's runtime (V8 or JavaScriptCore with ICU) gives them for en-US. Every locale is en-US here; collation
 * follows the Unicode collation algorithm's default order (punctuation, digits, letters; then accents, then
 * case) closely enough for common text, not for every script; dates are in UTC, the sandbox's only time zone.
 * test/workflow/conformance.test.ts compares a list of common cases with the CLI's.
 */
export const INTL = String.raw`(function () {
  "use strict";
  const put = (target, name, value) => Object.defineProperty(target, name, { value, writable: true, enumerable: false, configurable: true });
  const LOCALE = "en-US";
  const optionsOf = (options) => (options === undefined ? {} : Object(options));
  const pick = (value, allowed, fallback, name) => {
    if (value === undefined) return fallback;
    const text = String(value);
    if (!allowed.includes(text)) throw new RangeError("Value " + text + " out of range for Intl options property " + name);
    return text;
  };
  const digitsOption = (value, min, max, fallback, name) => {
    if (value === undefined) return fallback;
    const number = Math.floor(Number(value));
    if (!(number >= min && number <= max)) throw new RangeError(name + " value is out of range.");
    return number;
  };

  // Numbers: a decimal as its digits and the place of its point, from the shortest text that reads back as it.
  const decimalOf = (x) => {
    const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(Math.abs(x)));
    const digits = match[1] + (match[2] || "");
    let point = match[1].length + Number(match[3] || 0);
    const lead = digits.length - digits.replace(/^0+/, "").length;
    return { digits: digits.slice(lead) || "0", point: digits.slice(lead) ? point - lead : 1 };
  };
  // Rounded half away from zero to "places" digits after the point (negative: before it).
  const roundAt = (decimal, places) => {
    const keep = decimal.point + places;
    if (keep < 0) return { digits: "0", point: 1 };
    if (decimal.digits.length <= keep) return decimal;
    let kept = decimal.digits.slice(0, keep).split("").map(Number);
    if (Number(decimal.digits[keep]) >= 5) {
      let i = kept.length - 1;
      while (i >= 0 && kept[i] === 9) kept[i--] = 0;
      if (i < 0) return { digits: "1" + kept.join(""), point: decimal.point + 1 };
      kept[i] += 1;
    }
    if (kept.length === 0) return { digits: "0", point: 1 };
    return { digits: kept.join(""), point: decimal.point };
  };
  const shift = (decimal, by) => ({ digits: decimal.digits, point: decimal.point + by });
  const isZero = (decimal) => /^0*$/.test(decimal.digits);
  // Integer and fraction digits of a rounded decimal, the fraction padded to "minFraction" and stripped of zeros past it.
  const partsOf = (decimal, minFraction, maxFraction) => {
    const { digits, point } = decimal;
    const padded = point <= 0 ? "0".repeat(1 - point) + digits : digits.length < point ? digits + "0".repeat(point - digits.length) : digits;
    const at = Math.max(point, 1);
    let fraction = padded.slice(at, at + maxFraction);
    while (fraction.length > minFraction && fraction.endsWith("0")) fraction = fraction.slice(0, -1);
    return { integer: padded.slice(0, at).replace(/^0+(?=\d)/, ""), fraction: fraction + "0".repeat(Math.max(0, minFraction - fraction.length)) };
  };
  const group = (integer) => integer.replace(/\B(?=(\d{3})+(?!\d))/g, ",");

  const CURRENCY_SYMBOLS = { USD: "$", EUR: "€", GBP: "£", JPY: "¥", INR: "₹", CAD: "CA$", AUD: "A$", CNY: "CN¥", MXN: "MX$", BRL: "R$", KRW: "₩", ILS: "₪", NZD: "NZ$", HKD: "HK$", TWD: "NT$", VND: "₫", PHP: "₱" };
  const ZERO_DECIMAL_CURRENCIES = ["JPY", "KRW", "VND", "CLP", "ISK", "UGX", "PYG", "XAF", "XOF"];
  // Units in their short forms (a pair: singular and plural).
  const UNITS = { byte: "byte", kilobyte: "kB", megabyte: "MB", gigabyte: "GB", terabyte: "TB", petabyte: "PB", bit: "bit", millisecond: "ms", second: "sec", minute: "min", hour: "hr", day: ["day", "days"], week: ["wk", "wks"], month: ["mth", "mths"], year: ["yr", "yrs"], percent: "%", meter: "m", kilometer: "km", centimeter: "cm", millimeter: "mm", mile: "mi", foot: "ft", inch: "in", kilogram: "kg", gram: "g", pound: "lb", liter: "L", celsius: "°C", fahrenheit: "°F" };
  const ATTACHED_UNITS = ["percent", "celsius", "fahrenheit"];
  const COMPACT = [
    ["", "", ""],
    ["K", " thousand", ""],
    ["M", " million", ""],
    ["B", " billion", ""],
    ["T", " trillion", ""],
  ];

  function NumberFormat(locales, options) {
    if (!new.target) return new NumberFormat(locales, options);
    const o = optionsOf(options);
    const style = pick(o.style, ["decimal", "percent", "currency", "unit"], "decimal", "style");
    const currency = o.currency === undefined ? undefined : String(o.currency).toUpperCase();
    if (style === "currency" && currency === undefined) throw new TypeError("Currency code is required with currency style.");
    const currencyDisplay = pick(o.currencyDisplay, ["symbol", "narrowSymbol", "code", "name"], "symbol", "currencyDisplay");
    const notation = pick(o.notation, ["standard", "scientific", "engineering", "compact"], "standard", "notation");
    const compactDisplay = pick(o.compactDisplay, ["short", "long"], "short", "compactDisplay");
    const signDisplay = pick(o.signDisplay, ["auto", "never", "always", "exceptZero", "negative"], "auto", "signDisplay");
    const unit = o.unit === undefined ? undefined : String(o.unit);
    if (style === "unit" && unit === undefined) throw new TypeError("Unit is required with unit style.");
    const unitDisplay = pick(o.unitDisplay, ["short", "narrow", "long"], "short", "unitDisplay");
    const currencyDigits = currency !== undefined && ZERO_DECIMAL_CURRENCIES.includes(currency) ? 0 : 2;
    const defaultMin = style === "currency" && notation !== "compact" ? currencyDigits : 0;
    const defaultMax = style === "currency" && notation !== "compact" ? currencyDigits : style === "percent" ? 0 : notation === "compact" ? 0 : 3;
    let minimumFractionDigits = digitsOption(o.minimumFractionDigits, 0, 100, undefined, "minimumFractionDigits");
    let maximumFractionDigits = digitsOption(o.maximumFractionDigits, 0, 100, undefined, "maximumFractionDigits");
    if (minimumFractionDigits === undefined) minimumFractionDigits = Math.min(defaultMin, maximumFractionDigits ?? defaultMin);
    if (maximumFractionDigits === undefined) maximumFractionDigits = Math.max(defaultMax, minimumFractionDigits);
    if (minimumFractionDigits > maximumFractionDigits) throw new RangeError("maximumFractionDigits value is out of range.");
    const minimumSignificantDigits = digitsOption(o.minimumSignificantDigits, 1, 21, undefined, "minimumSignificantDigits");
    const maximumSignificantDigits = digitsOption(o.maximumSignificantDigits, minimumSignificantDigits ?? 1, 21, undefined, "maximumSignificantDigits");
    const significant = minimumSignificantDigits !== undefined || maximumSignificantDigits !== undefined;
    const useGrouping = o.useGrouping === undefined ? (notation === "compact" ? "min2" : "auto") : o.useGrouping === false || o.useGrouping === "false" ? false : String(o.useGrouping) === "true" ? "always" : String(o.useGrouping);
    const resolved = {
      locale: LOCALE,
      numberingSystem: "latn",
      style,
      ...(currency !== undefined && style === "currency" ? { currency, currencyDisplay, currencySign: "standard" } : {}),
      ...(style === "unit" ? { unit, unitDisplay } : {}),
      minimumIntegerDigits: digitsOption(o.minimumIntegerDigits, 1, 21, 1, "minimumIntegerDigits"),
      ...(significant
        ? { minimumSignificantDigits: minimumSignificantDigits ?? 1, maximumSignificantDigits: maximumSignificantDigits ?? 21 }
        : { minimumFractionDigits, maximumFractionDigits }),
      useGrouping,
      notation,
      ...(notation === "compact" ? { compactDisplay } : {}),
      signDisplay,
      roundingMode: "halfExpand",
    };
    put(this, "resolvedOptions", () => ({ ...resolved }));
    put(this, "format", (value) => formatNumber(resolved, value));
  }
  put(NumberFormat, "supportedLocalesOf", () => [LOCALE]);

  const roundNumber = (o, decimal) => {
    if (o.maximumSignificantDigits !== undefined) {
      const rounded = roundAt(decimal, o.maximumSignificantDigits - decimal.point);
      const places = o.maximumSignificantDigits - rounded.point;
      const min = Math.max(0, o.minimumSignificantDigits - rounded.point);
      return partsOf(rounded, min, Math.max(0, places));
    }
    return partsOf(roundAt(decimal, o.maximumFractionDigits), o.minimumFractionDigits, o.maximumFractionDigits);
  };

  // Compact notation: the unit of thousands it is shown in, and the digits (two significant below ten of that unit).
  const compactParts = (o, decimal) => {
    let level = Math.min(4, Math.max(0, Math.floor((decimal.point - 1) / 3)));
    for (;;) {
      const scaled = shift(decimal, -3 * level);
      const explicit = o.maximumSignificantDigits !== undefined || o.maximumFractionDigits > 0 || o.minimumFractionDigits > 0;
      const parts = explicit ? roundNumber(o, scaled) : scaled.point <= 1 ? partsOf(roundAt(scaled, 2 - Math.max(scaled.point, 1)), 0, 1) : partsOf(roundAt(scaled, 0), 0, 0);
      if (parts.integer.length > 3 && level < 4 && !isZero(decimal)) {
        level += 1;
        continue;
      }
      return { parts, level };
    }
  };

  function formatNumber(o, value) {
    const x = typeof value === "bigint" ? value : Number(value);
    if (typeof x === "number" && Number.isNaN(x)) return "NaN";
    const negative = typeof x === "bigint" ? x < 0n : x < 0 || Object.is(x, -0);
    let body;
    if (typeof x === "number" && !Number.isFinite(x)) body = "∞";
    else {
      let decimal = typeof x === "bigint" ? { digits: (negative ? -x : x).toString(), point: (negative ? -x : x).toString().length } : decimalOf(x);
      if (o.style === "percent") decimal = shift(decimal, 2);
      let parts;
      let suffix = "";
      if (o.notation === "compact") {
        const compact = compactParts(o, decimal);
        parts = compact.parts;
        suffix = COMPACT[compact.level][o.compactDisplay === "long" ? 1 : 0];
      } else parts = roundNumber(o, decimal);
      const integer = parts.integer.padStart(o.minimumIntegerDigits, "0");
      const grouped = o.useGrouping === false || (o.useGrouping === "min2" && integer.length < 5) ? integer : group(integer);
      body = grouped + (parts.fraction ? "." + parts.fraction : "") + suffix;
    }
    const zero = /^[0.,]*$/.test(body.replace(/[^0-9.,]/g, "")) && body !== "∞";
    const sign =
      o.signDisplay === "never"
        ? ""
        : negative && !(zero && o.signDisplay === "exceptZero") && !(zero && o.signDisplay === "negative")
          ? "-"
          : (o.signDisplay === "always" || (o.signDisplay === "exceptZero" && !zero)) && !negative
            ? "+"
            : "";
    if (o.style === "percent") return sign + body + "%";
    if (o.style === "currency") {
      const symbol = o.currencyDisplay === "code" ? o.currency + "\u00a0" : CURRENCY_SYMBOLS[o.currency] ?? o.currency + "\u00a0";
      if (o.currencyDisplay === "name") return sign + body + " " + o.currency;
      return sign + symbol + body;
    }
    if (o.style === "unit") {
      const one = body === "1";
      if (o.unitDisplay === "long") return sign + body + " " + o.unit + (one ? "" : "s");
      const short = UNITS[o.unit];
      const name = short === undefined ? o.unit : typeof short === "string" ? short : short[one ? 0 : 1];
      return sign + body + ((o.unitDisplay === "narrow" && short !== undefined) || ATTACHED_UNITS.includes(o.unit) ? "" : " ") + name;
    }
    return sign + body;
  }

  // Collation, after the Unicode collation algorithm's default order: punctuation and symbols, then digits,
  // then letters by their base letter; accents count after that, then case (lower case first).
  const PUNCTUATION = "\t\n\u000b\f\r \u00a0_-,;:!?.'\"()[]{}@*/\\&#%\u0060^+<=>|~$";
  const EXPANSIONS = { ß: "ss", æ: "ae", Æ: "AE", œ: "oe", Œ: "OE", ø: "o", Ø: "O", ł: "l", Ł: "L", đ: "d", Đ: "D", ı: "i" };
  const collationUnits = (text, numeric, ignorePunctuation) => {
    const units = [];
    const chars = Array.from(String(text).normalize("NFD"));
    for (let i = 0; i < chars.length; i++) {
      let char = chars[i];
      if (/\p{M}/u.test(char)) {
        if (units.length > 0) units[units.length - 1].accent += char;
        continue;
      }
      if (numeric && /\d/.test(char)) {
        let run = char;
        while (i + 1 < chars.length && /\d/.test(chars[i + 1])) run += chars[++i];
        const value = run.replace(/^0+(?=\d)/, "");
        // Equal numbers: the one written with fewer leading zeros first.
        units.push({ primary: [1, value.length, value], accent: "0".repeat(run.length - value.length), upper: false, expanded: false });
        continue;
      }
      const expanded = EXPANSIONS[char];
      const accent = expanded !== undefined && expanded.length === 1 ? "\u0338" : "";
      for (const part of expanded ?? char) {
        const lower = part.toLowerCase();
        const upper = part !== lower;
        const punctuation = PUNCTUATION.indexOf(part);
        if (punctuation >= 0 && ignorePunctuation) continue;
        const primary =
          punctuation >= 0
            ? [0, punctuation, ""]
            : /\s|\p{P}|\p{S}/u.test(part)
              ? [0, PUNCTUATION.length + part.codePointAt(0), ""]
              : /\d/.test(part)
                ? [1, 1, part]
                : [2, lower.codePointAt(0), ""];
        units.push({ primary, accent, upper, expanded: expanded !== undefined && expanded.length > 1 });
      }
    }
    return units;
  };
  const comparePrimary = (a, b) => {
    for (let i = 0; i < 3; i++) {
      if (a[i] < b[i]) return -1;
      if (a[i] > b[i]) return 1;
    }
    return 0;
  };
  const compareLevels = (a, b, sensitivity, upperFirst) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const order = comparePrimary(a[i].primary, b[i].primary);
      if (order !== 0) return order;
    }
    if (a.length !== b.length) return a.length < b.length ? -1 : 1;
    if (sensitivity === "variant" || sensitivity === "accent") {
      for (let i = 0; i < a.length; i++) if (a[i].accent !== b[i].accent) return a[i].accent < b[i].accent ? -1 : 1;
    }
    if (sensitivity === "variant" || sensitivity === "case") {
      for (let i = 0; i < a.length; i++) if (a[i].upper !== b[i].upper) return a[i].upper === upperFirst ? -1 : 1;
      for (let i = 0; i < a.length; i++) if (a[i].expanded !== b[i].expanded) return a[i].expanded ? 1 : -1;
    }
    return 0;
  };

  function Collator(locales, options) {
    if (!new.target) return new Collator(locales, options);
    const o = optionsOf(options);
    const usage = pick(o.usage, ["sort", "search"], "sort", "usage");
    const sensitivity = pick(o.sensitivity, ["base", "accent", "case", "variant"], "variant", "sensitivity");
    const numeric = o.numeric === undefined ? false : Boolean(o.numeric);
    const ignorePunctuation = o.ignorePunctuation === undefined ? false : Boolean(o.ignorePunctuation);
    const caseFirst = pick(o.caseFirst, ["upper", "lower", "false"], "false", "caseFirst");
    const resolved = { locale: LOCALE, usage, sensitivity, ignorePunctuation, collation: "default", numeric, caseFirst };
    put(this, "resolvedOptions", () => ({ ...resolved }));
    put(this, "compare", (a, b) => compareLevels(collationUnits(a, numeric, ignorePunctuation), collationUnits(b, numeric, ignorePunctuation), sensitivity, caseFirst === "upper"));
  }
  put(Collator, "supportedLocalesOf", () => [LOCALE]);

  // Dates, in en-US's forms; the sandbox's time zone is UTC, as a timeZone of "UTC" would say.
  const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
  const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  const two = (n) => String(n).padStart(2, "0");
  const DATE_FIELDS = ["weekday", "era", "year", "month", "day", "hour", "minute", "second", "timeZoneName"];

  function DateTimeFormat(locales, options, defaults = "date") {
    if (!new.target) return new DateTimeFormat(locales, options, defaults);
    const o = { ...optionsOf(options) };
    if (o.timeZone !== undefined && !/^(utc|gmt|etc\/utc|etc\/gmt)$/i.test(String(o.timeZone))) {
      throw new RangeError("Invalid time zone specified: " + o.timeZone + " (the workflow sandbox knows UTC only)");
    }
    const dateStyle = o.dateStyle;
    const timeStyle = o.timeStyle;
    if (dateStyle === undefined && timeStyle === undefined && !DATE_FIELDS.some((field) => o[field] !== undefined)) {
      if (defaults !== "time") Object.assign(o, { year: "numeric", month: "numeric", day: "numeric" });
      if (defaults !== "date") Object.assign(o, { hour: "numeric", minute: "2-digit", second: "2-digit" });
    }
    if (dateStyle !== undefined) Object.assign(o, { full: { weekday: "long", year: "numeric", month: "long", day: "numeric" }, long: { year: "numeric", month: "long", day: "numeric" }, medium: { year: "numeric", month: "short", day: "numeric" }, short: { year: "2-digit", month: "numeric", day: "numeric" } }[dateStyle]);
    if (timeStyle !== undefined) Object.assign(o, timeStyle === "short" ? { hour: "numeric", minute: "2-digit" } : { hour: "numeric", minute: "2-digit", second: "2-digit" });
    const hour12 = o.hour12 !== undefined ? Boolean(o.hour12) : o.hourCycle !== undefined ? o.hourCycle === "h12" || o.hourCycle === "h11" : true;
    const resolved = { locale: LOCALE, calendar: "gregory", numberingSystem: "latn", timeZone: "UTC" };
    for (const field of DATE_FIELDS) if (o[field] !== undefined) resolved[field] = o[field];
    if (o.hour !== undefined) Object.assign(resolved, { hourCycle: hour12 ? "h12" : "h23", hour12 });
    put(this, "resolvedOptions", () => ({ ...resolved }));
    put(this, "format", (date) => formatDate(o, hour12, date === undefined ? unavailableNow() : date));
  }
  put(DateTimeFormat, "supportedLocalesOf", () => [LOCALE]);
  const unavailableNow = () => {
    throw new Error("Intl.DateTimeFormat().format() without a date reads the clock, which is unavailable in workflow scripts; pass times in through args");
  };

  function formatDate(o, hour12, value) {
    const date = value instanceof Date ? value : new Date(Number(value));
    const time = date.getTime();
    if (Number.isNaN(time)) throw new RangeError("Invalid time value");
    const d = new Date(time);
    const year = d.getUTCFullYear();
    const month = d.getUTCMonth();
    const day = d.getUTCDate();
    let datePart = "";
    const yearText = o.year === "2-digit" ? two(year % 100) : String(year);
    const dayText = o.day === "2-digit" ? two(day) : String(day);
    if (o.month === "long" || o.month === "short" || o.month === "narrow") {
      const name = o.month === "long" ? MONTHS[month] : o.month === "short" ? MONTHS[month].slice(0, 3) : MONTHS[month][0];
      datePart = o.day !== undefined ? name + " " + dayText + (o.year !== undefined ? ", " + yearText : "") : name + (o.year !== undefined ? " " + yearText : "");
    } else {
      const monthText = o.month === undefined ? undefined : o.month === "2-digit" ? two(month + 1) : String(month + 1);
      datePart = [monthText, o.day !== undefined ? dayText : undefined, o.year !== undefined ? yearText : undefined].filter((part) => part !== undefined).join("/");
    }
    if (o.weekday !== undefined) {
      const weekday = o.weekday === "long" ? DAYS[d.getUTCDay()] : o.weekday === "short" ? DAYS[d.getUTCDay()].slice(0, 3) : DAYS[d.getUTCDay()][0];
      datePart = datePart === "" ? weekday : weekday + ", " + datePart;
    }
    let timePart = "";
    if (o.hour !== undefined || o.minute !== undefined || o.second !== undefined) {
      const hours = d.getUTCHours();
      const shown = hour12 ? hours % 12 || 12 : hours;
      const fields = [];
      if (o.hour !== undefined) fields.push(o.hour === "2-digit" || (!hour12 && o.minute !== undefined) ? two(shown) : String(shown));
      if (o.minute !== undefined) fields.push(o.hour !== undefined || o.minute === "2-digit" ? two(d.getUTCMinutes()) : String(d.getUTCMinutes()));
      if (o.second !== undefined) fields.push(o.minute !== undefined || o.second === "2-digit" ? two(d.getUTCSeconds()) : String(d.getUTCSeconds()));
      timePart = fields.join(":") + (o.hour !== undefined && hour12 ? " " + (hours < 12 ? "AM" : "PM") : "");
    }
    return datePart !== "" && timePart !== "" ? datePart + ", " + timePart : datePart + timePart;
  }

  // Plural categories and lists, as English has them.
  function PluralRules(locales, options) {
    if (!new.target) throw new TypeError("Constructor Intl.PluralRules requires 'new'");
    const type = pick(optionsOf(options).type, ["cardinal", "ordinal"], "cardinal", "type");
    put(this, "resolvedOptions", () => ({ locale: LOCALE, type, pluralCategories: type === "ordinal" ? ["few", "one", "two", "other"] : ["one", "other"] }));
    put(this, "select", (value) => {
      const n = Math.abs(Number(value));
      if (type === "cardinal") return n === 1 && Number.isInteger(Number(value)) ? "one" : "other";
      const tens = n % 100;
      if (!Number.isInteger(n) || (tens >= 11 && tens <= 13)) return "other";
      return ["other", "one", "two", "few"][n % 10] ?? "other";
    });
  }
  put(PluralRules, "supportedLocalesOf", () => [LOCALE]);

  function ListFormat(locales, options) {
    if (!new.target) throw new TypeError("Constructor Intl.ListFormat requires 'new'");
    const o = optionsOf(options);
    const type = pick(o.type, ["conjunction", "disjunction", "unit"], "conjunction", "type");
    const style = pick(o.style, ["long", "short", "narrow"], "long", "style");
    const word = type === "conjunction" ? (style === "long" ? "and" : style === "short" ? "&" : "") : type === "disjunction" ? "or" : "";
    put(this, "resolvedOptions", () => ({ locale: LOCALE, type, style }));
    put(this, "format", (list) => {
      const items = Array.from(list ?? [], String);
      if (items.length < 2) return items.join("");
      const last = items[items.length - 1];
      const head = items.slice(0, -1);
      if (type === "unit") return style === "narrow" ? items.join(" ") : items.join(", ");
      if (word === "") return items.join(", ");
      if (items.length === 2) return head[0] + " " + word + " " + last;
      return head.join(", ") + ", " + word + " " + last;
    });
  }
  put(ListFormat, "supportedLocalesOf", () => [LOCALE]);

  function RelativeTimeFormat(locales, options) {
    if (!new.target) throw new TypeError("Constructor Intl.RelativeTimeFormat requires 'new'");
    const o = optionsOf(options);
    const numeric = pick(o.numeric, ["always", "auto"], "always", "numeric");
    const style = pick(o.style, ["long", "short", "narrow"], "long", "style");
    const WORDS = { "-1": { day: "yesterday", week: "last week", month: "last month", year: "last year" }, 0: { day: "today", week: "this week", month: "this month", year: "this year", second: "now" }, 1: { day: "tomorrow", week: "next week", month: "next month", year: "next year" } };
    put(this, "resolvedOptions", () => ({ locale: LOCALE, style, numeric, numberingSystem: "latn" }));
    put(this, "format", (value, unit) => {
      const n = Number(value);
      const single = String(unit).replace(/s$/, "");
      if (!["second", "minute", "hour", "day", "week", "month", "quarter", "year"].includes(single)) throw new RangeError("Invalid unit argument for format() '" + unit + "'");
      const word = numeric === "auto" ? WORDS[String(n)]?.[single] : undefined;
      if (word !== undefined) return word;
      const amount = Math.abs(n);
      const text = formatNumber(new NumberFormat().resolvedOptions(), amount) + " " + single + (amount === 1 ? "" : "s");
      return n < 0 || Object.is(n, -0) ? text + " ago" : "in " + text;
    });
  }
  put(RelativeTimeFormat, "supportedLocalesOf", () => [LOCALE]);

  const Intl = {};
  for (const [name, value] of Object.entries({ NumberFormat, Collator, DateTimeFormat, PluralRules, ListFormat, RelativeTimeFormat })) put(Intl, name, value);
  put(Intl, "getCanonicalLocales", (locales) => (locales === undefined ? [] : [].concat(locales).map(String)));
  Object.defineProperty(Intl, Symbol.toStringTag, { value: "Intl", configurable: true });
  // Unless the script has put an Intl of its own there (INTL_ON_FIRST_USE leaves a getter until then).
  const own = Object.getOwnPropertyDescriptor(globalThis, "Intl");
  if (own === undefined || own.get !== undefined) put(globalThis, "Intl", Intl);

  // The locale methods of the built-ins, over the same formats.
  const numberMethod = function (locales, options) {
    return new NumberFormat(locales, options).format(this.valueOf());
  };
  put(Number.prototype, "toLocaleString", numberMethod);
  put(BigInt.prototype, "toLocaleString", numberMethod);
  put(String.prototype, "localeCompare", function (that, locales, options) {
    return new Collator(locales, options).compare(String(this), that);
  });
  const dateMethod = (defaults) =>
    function (locales, options) {
      if (Number.isNaN(this.getTime())) return "Invalid Date";
      return new DateTimeFormat(locales, options, defaults).format(this);
    };
  put(Date.prototype, "toLocaleString", dateMethod("all"));
  put(Date.prototype, "toLocaleDateString", dateMethod("date"));
  put(Date.prototype, "toLocaleTimeString", dateMethod("time"));
})();`;

/** The built-ins' locale methods that INTL replaces. */
const LOCALE_METHODS = [
  ["Number.prototype", "toLocaleString"],
  ["BigInt.prototype", "toLocaleString"],
  ["String.prototype", "localeCompare"],
  ["Date.prototype", "toLocaleString"],
  ["Date.prototype", "toLocaleDateString"],
  ["Date.prototype", "toLocaleTimeString"],
];

/**
 * JavaScript the prelude runs first in every context: INTL, compiled the first time the script reads `Intl` or
 * calls a locale method. Compiling it takes about half as long as the rest of a context's start, which a script
 * that formats nothing should not pay.
 */
export const INTL_ON_FIRST_USE = `(function (compile) {
  let install = () => {
    install = () => {};
    compile(${JSON.stringify(INTL)})();
  };
  const asData = (value) => Object.defineProperty(globalThis, "Intl", { value, writable: true, enumerable: false, configurable: true });
  Object.defineProperty(globalThis, "Intl", {
    get() {
      install();
      return globalThis.Intl;
    },
    set: asData,
    enumerable: false,
    configurable: true,
  });
  for (const [target, name] of [${LOCALE_METHODS.map(([target, name]) => `[${target}, "${name}"]`).join(", ")}]) {
    const method = function (...parts) {
      install();
      return target[name].apply(this, parts);
    };
    Object.defineProperty(target, name, { value: method, writable: true, enumerable: false, configurable: true });
  }
})(Function);`;
