/** An ID accepted by the client: a number or its decimal string form. */
export type Id = string | number;
