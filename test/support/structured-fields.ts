/**
 * A strict parser of RFC 9651 Structured Field Lists (§3.1, parsed as §4.2.1 says) whose members are
 * Items (§3.3): the bare items strings (§3.3.3), integers and decimals (§3.3.1, §3.3.2), tokens
 * (§3.3.4) and booleans (§3.3.6), each with its Parameters (§3.1.2). Anything else, an Inner List,
 * a Byte Sequence, a Date, a Display String, fails the parse, as does any text the grammar refuses.
 */
export type BareItem =
  | { type: 'string'; value: string }
  | { type: 'integer'; value: number }
  | { type: 'decimal'; value: number }
  | { type: 'token'; value: string }
  | { type: 'boolean'; value: boolean };

export interface Item {
  value: BareItem;
  /** In the order given; a key given twice keeps its last value (§4.2.3.2). */
  params: Map<string, BareItem>;
}

export class StructuredFieldError extends Error {}

/** Parses a field's value (its lines joined with `, `, as §4.2 says) as a List of Items. */
export function parseList(field: string): Item[] {
  const parser = new Parser(field);
  return parser.whole(() => parser.list());
}

const DIGIT = /[0-9]/;
const LCALPHA = /[a-z]/;
const KEY_CHAR = /[a-z0-9_\-.*]/;
const ALPHA = /[A-Za-z]/;
// tchar (RFC 9110 §5.6.2), ":" and "/".
const TOKEN_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/;

class Parser {
  private at = 0;

  constructor(private readonly input: string) {
    for (const char of input) if (char.charCodeAt(0) > 0x7f) this.fail('a character outside ASCII');
  }

  /** Leading and trailing spaces are dropped; anything left after the value fails (§4.2). */
  whole<T>(parse: () => T): T {
    this.skip(' ');
    const value = parse();
    this.skip(' ');
    if (this.at < this.input.length) this.fail('text after the value');
    return value;
  }

  list(): Item[] {
    const members: Item[] = [];
    while (this.at < this.input.length) {
      if (this.peek() === '(') this.fail('an Inner List, where an Item is expected');
      members.push(this.item());
      this.skipOws();
      if (this.at >= this.input.length) return members;
      if (this.next() !== ',') this.fail('a member not followed by a comma');
      this.skipOws();
      if (this.at >= this.input.length) this.fail('a trailing comma');
    }
    return members;
  }

  private item(): Item {
    return { value: this.bareItem(), params: this.params() };
  }

  private params(): Map<string, BareItem> {
    const params = new Map<string, BareItem>();
    while (this.peek() === ';') {
      this.at++;
      this.skip(' ');
      const key = this.key();
      let value: BareItem = { type: 'boolean', value: true };
      if (this.peek() === '=') {
        this.at++;
        value = this.bareItem();
      }
      params.set(key, value);
    }
    return params;
  }

  private key(): string {
    const first = this.peek();
    if (first === undefined || !(LCALPHA.test(first) || first === '*')) this.fail('a key not starting with a lowercase letter or *');
    let key = '';
    while (this.peek() !== undefined && KEY_CHAR.test(this.peek()!)) key += this.next();
    return key;
  }

  private bareItem(): BareItem {
    const first = this.peek();
    if (first === undefined) this.fail('a missing value');
    if (first === '-' || DIGIT.test(first)) return this.number();
    if (first === '"') return { type: 'string', value: this.string() };
    if (first === '?') return this.boolean();
    if (first === '*' || ALPHA.test(first)) return this.token();
    return this.fail(`a value starting with ${JSON.stringify(first)} (not a string, number, token or boolean)`);
  }

  /** §4.2.4: at most 15 digits for an Integer; a Decimal has at most 12 before the point and 1 to 3 after it. */
  private number(): BareItem {
    const start = this.at;
    if (this.peek() === '-') this.at++;
    if (this.peek() === undefined || !DIGIT.test(this.peek()!)) this.fail('a number without digits');
    let decimal = false;
    let digits = 0;
    let fraction = 0;
    while (this.peek() !== undefined) {
      const char = this.peek()!;
      if (DIGIT.test(char)) {
        if (decimal) fraction++;
        else digits++;
      } else if (char === '.' && !decimal) {
        if (digits > 12) this.fail('a decimal with more than 12 digits before its point');
        decimal = true;
      } else break;
      this.at++;
      if (!decimal && digits > 15) this.fail('an integer of more than 15 digits');
      if (decimal && fraction > 3) this.fail('a decimal with more than 3 digits after its point');
    }
    const text = this.input.slice(start, this.at);
    if (!decimal) return { type: 'integer', value: Number(text) };
    if (fraction === 0) this.fail('a decimal ending in its point');
    return { type: 'decimal', value: Number(text) };
  }

  /** §4.2.5: printable ASCII between quotes; only `"` and `\` are escaped, with `\`. */
  private string(): string {
    this.at++;
    let value = '';
    for (;;) {
      const char = this.next();
      if (char === undefined) this.fail('a string without its closing quote');
      if (char === '"') return value;
      if (char === '\\') {
        const escaped = this.next();
        if (escaped !== '"' && escaped !== '\\') this.fail('a backslash escaping neither " nor \\');
        value += escaped;
        continue;
      }
      const code = char.charCodeAt(0);
      if (code < 0x20 || code > 0x7e) this.fail('a control character in a string');
      value += char;
    }
  }

  private boolean(): BareItem {
    this.at++;
    const char = this.next();
    if (char !== '0' && char !== '1') this.fail('a boolean other than ?0 or ?1');
    return { type: 'boolean', value: char === '1' };
  }

  private token(): BareItem {
    let value = '';
    while (this.peek() !== undefined && TOKEN_CHAR.test(this.peek()!)) value += this.next();
    return { type: 'token', value };
  }

  private skip(char: string): void {
    while (this.peek() === char) this.at++;
  }

  /** Optional whitespace (RFC 9110 OWS): spaces and tabs. */
  private skipOws(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.at++;
  }

  private peek(): string | undefined {
    return this.input[this.at];
  }

  private next(): string | undefined {
    return this.input[this.at++];
  }

  private fail(what: string): never {
    throw new StructuredFieldError(`${what} at ${this.at} of ${JSON.stringify(this.input)}`);
  }
}
