/**
 * A time as ISO 8601 text, as the listings print `modified`: `Date`'s own
 * printer (a day-prefix cache here saved about a microsecond an entry, which
 * no benchmark row showed mattered beside the `lstat` each entry costs).
 *
 * @internal
 */
export const isoTime = (ms: number): string => new Date(ms).toISOString()
