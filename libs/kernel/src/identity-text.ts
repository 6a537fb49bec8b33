/**
 * An identity (an email address, a username) as it is compared: in Unicode NFC (a letter composed
 * or written as a base and a combining mark is one), case-folded (upper case then lower case, so that
 * `ß` and `SS`, `ς` and `σ` fold together too), and NFC again (folding may decompose). For ASCII
 * text this is its lower case.
 */
export const foldedIdentity = (text: string): string => text.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
