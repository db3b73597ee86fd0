-- The form of a language model's answer (-lm-answer): action (one action
-- line), or target (a comment line naming the element, then the action),
-- so that the two forms' success can be compared over one table. Empty
-- for the features network and before the form was recorded (an action
-- line).
ALTER TABLE {db}.actions ADD COLUMN lm_answer String AFTER lm_attempts;
