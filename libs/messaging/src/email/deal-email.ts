import type { OutgoingEmail } from '@deals/kernel';

/** What an email shows of a deal: the v1 deal's own words and links. */
export interface DealSummary {
  title: string;
  imageUrl: string;
  /** Cents. */
  price: number;
  value: number;
  finePrint: string | null;
  showUrl: string;
}

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Cents as dollars: 4900 → $49.00. */
export const dollars = (cents: number) => `$${Math.floor(cents / 100).toLocaleString('en-US')}.${String(cents % 100).padStart(2, '0')}`;

function dealHtml(deal: DealSummary): string {
  return [
    `<h2 style="margin:0 0 8px">${escape(deal.title)}</h2>`,
    `<a href="${escape(deal.showUrl)}"><img src="${escape(deal.imageUrl)}" alt="${escape(deal.title)}" width="480" style="max-width:100%"></a>`,
    `<p><strong>${dollars(deal.price)}</strong> <span style="text-decoration:line-through">${dollars(deal.value)}</span> value</p>`,
    deal.finePrint ? `<p style="font-size:12px;color:#555">${escape(deal.finePrint)}</p>` : '',
    `<p><a href="${escape(deal.showUrl)}">See the deal</a></p>`,
  ].join('\n');
}

function dealText(deal: DealSummary): string {
  return [deal.title, `${dollars(deal.price)} (a ${dollars(deal.value)} value)`, deal.finePrint ?? '', `See the deal: ${deal.showUrl}`]
    .filter(Boolean)
    .join('\n');
}

const page = (body: string) => `<!doctype html><html><body style="font-family:sans-serif">\n${body}\n</body></html>`;

/** A targeted-email batch's message: one deal. */
export function dealEmail(deal: DealSummary, to: string, messageId: string): OutgoingEmail {
  return { to, subject: deal.title, text: `${dealText(deal)}\n`, html: page(dealHtml(deal)), messageId };
}

/**
 * The daily regional email: the region's deals on sale, with a one-click unsubscribe link
 * (RFC 8058: `List-Unsubscribe` and `List-Unsubscribe-Post`).
 */
export function digestEmail(
  regionName: string,
  deals: DealSummary[],
  to: string,
  messageId: string,
  unsubscribeUrl: string,
): OutgoingEmail {
  const subject = `Today's deals in ${regionName}`;
  return {
    to,
    subject,
    text: `${subject}\n\n${deals.map(dealText).join('\n\n')}\n\nUnsubscribe: ${unsubscribeUrl}\n`,
    html: page(
      `<h1>${escape(subject)}</h1>\n${deals.map(dealHtml).join('\n<hr>\n')}\n<p style="font-size:12px"><a href="${escape(unsubscribeUrl)}">Unsubscribe</a></p>`,
    ),
    messageId,
    headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}
