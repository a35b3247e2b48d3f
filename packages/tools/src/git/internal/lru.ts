/**
 * A small least-recently-used map for the pure-JavaScript backend's parsed
 * objects. It is synchronous because lookups sit in hot loops (tree walks,
 * history walks) where an effectful cache would cost more than the lookup;
 * entries are content-addressed, so they never go stale, only out.
 *
 * @internal
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>()
  private weight = 0
  private readonly capacity: number
  private readonly weigh: (v: V) => number

  constructor(capacity: number, weigh: (v: V) => number = () => 1) {
    this.capacity = capacity
    this.weigh = weigh
  }

  get(key: K): V | undefined {
    const v = this.map.get(key)
    if (v !== undefined) {
      this.map.delete(key)
      this.map.set(key, v)
    }
    return v
  }

  set(key: K, value: V): void {
    const old = this.map.get(key)
    if (old !== undefined) {
      this.weight -= this.weigh(old)
      this.map.delete(key)
    }
    this.map.set(key, value)
    this.weight += this.weigh(value)
    while (this.weight > this.capacity && this.map.size > 1) {
      const first = this.map.keys().next().value as K
      this.weight -= this.weigh(this.map.get(first)!)
      this.map.delete(first)
    }
  }
}
