-- A select_option of several options (features v18: a listbox's select
-- adds one option to those selected; the event carries the whole new
-- selection, BrowserGym's select_option(bid, [...])). text keeps the
-- first; options all of them, empty for one.
ALTER TABLE {db}.actions ADD COLUMN options Array(String) AFTER text;
