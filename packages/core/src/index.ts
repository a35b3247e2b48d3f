export const hello = (name: string): string => `hello ${name}`
