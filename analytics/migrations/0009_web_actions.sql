-- Actions for the whole web (issue 37): a click at a point, double click,
-- hover, and drags from an element or a point. Widening an Enum8 only adds
-- names to its metadata; rows already written keep their values.
ALTER TABLE {db}.actions MODIFY COLUMN action_type Enum8('unspecified' = 0, 'noop' = 1, 'click' = 2, 'fill' = 3, 'select_option' = 4, 'scroll' = 5, 'press' = 6, 'goto' = 7, 'go_back' = 8, 'send_msg_to_user' = 9, 'mouse_click' = 10, 'dblclick' = 11, 'hover' = 12, 'drag_and_drop' = 13, 'mouse_drag_and_drop' = 14);
ALTER TABLE {db}.transitions MODIFY COLUMN action_type Enum8('unspecified' = 0, 'noop' = 1, 'click' = 2, 'fill' = 3, 'select_option' = 4, 'scroll' = 5, 'press' = 6, 'goto' = 7, 'go_back' = 8, 'send_msg_to_user' = 9, 'mouse_click' = 10, 'dblclick' = 11, 'hover' = 12, 'drag_and_drop' = 13, 'mouse_drag_and_drop' = 14);

-- Where a drag ends: drag_and_drop's element, mouse_drag_and_drop's point
-- (x, y being where it starts and where mouse_click clicks).
ALTER TABLE {db}.actions ADD COLUMN to_bid String AFTER bid;
ALTER TABLE {db}.actions ADD COLUMN to_x Float32 AFTER y;
ALTER TABLE {db}.actions ADD COLUMN to_y Float32 AFTER to_x;
