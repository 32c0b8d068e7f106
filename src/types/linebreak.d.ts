// The Unicode line breaking algorithm (UAX #14) as pdfkit's dependency `linebreak` ships it, untyped.
declare module 'linebreak' {
  interface Break {
    /** Where the next line may begin (a UTF-16 index). */
    position: number;
    /** A hard break (a newline): the line must end here. */
    required: boolean;
  }
  export default class LineBreaker {
    constructor(text: string);
    nextBreak(): Break | null;
  }
}
