// The cart example, built into a component by componentize-js: an exported
// resource is a class, its instances are the carts that rt keeps as handles
// between calls (see cart.wit). WIT's kebab-case names are camelCase here,
// u64 values are BigInts, and a thrown string is the err of a result.

class Cart {
  #currency;
  /** sku → { quantity, unitPriceCents }, in the order the skus came. */
  #lines = new Map();

  constructor(currency) {
    this.#currency = currency;
  }

  add(sku, quantity, unitPriceCents) {
    const quantityBefore = this.#lines.get(sku)?.quantity ?? 0;
    this.#lines.set(sku, { quantity: quantityBefore + quantity, unitPriceCents });
    return this.#lines.size;
  }

  remove(sku) {
    return this.#lines.delete(sku);
  }

  lines() {
    return [...this.#lines].map(([sku, { quantity, unitPriceCents }]) => ({ sku, quantity, unitPriceCents }));
  }

  total() {
    let cents = 0n;
    for (const { quantity, unitPriceCents } of this.#lines.values()) cents += BigInt(quantity) * unitPriceCents;
    return { currency: this.#currency, cents };
  }

  clear() {
    this.#lines.clear();
  }

  static merge(a, b) {
    if (a.#currency !== b.#currency) throw `cannot merge a cart in ${a.#currency} with a cart in ${b.#currency}`;
    const merged = new Cart(a.#currency);
    for (const line of [...a.lines(), ...b.lines()]) merged.add(line.sku, line.quantity, line.unitPriceCents);
    return merged;
  }
}

export const carts = {
  Cart,
  checkout(cart) {
    const lines = cart.lines();
    // The cart was moved into this call: nobody can use it after it returns.
    return { lines, items: lines.reduce((n, line) => n + line.quantity, 0), total: cart.total() };
  },
};
