"""The person's own world, read from the words: what only a capability could answer or do.

A small model asked "where's my parcel?" or "is it raining in Shenzhen right now?" answers
anyway, and its answer is made up. These readers tell such messages apart, in English and
Chinese, so they are routed to a capability or answered with an honest "I can't":

- ``asks_about_own_records``: a question about the person's own systems (an order, a ticket,
  an account, their mailbox, their calendar) — with no capability for it, no model may answer;
- ``needs_the_world``: that, or live data (today's weather, a flight's status, a price now),
  or an act in the world (book, pay, send, restart a server);
- ``beyond_this_machine``: the part of that no tool of this machine reaches either (a remote
  machine, records in other systems, an act in the world), which the agent may not take;
- ``remote_machine``: a machine of the person's other than this one, asked about or acted on;
- ``computes_on_given_figures``, ``asks_how_it_works``: a sum on figures the message itself
  gives, a question of how something works — conversation, whatever else the words name.

What is quoted is left out ("把“今天天气很好”翻译成英文" asks for a translation, not for today's
weather). cues.py holds the rest of what the words alone make certain.
"""

from __future__ import annotations

import re

_F = re.IGNORECASE

_OWN_RECORD_NOUNS = (
    r"orders?|parcels?|packages?|shipments?|deliver(?:y|ies)|tracking|invoices?|bills?|payments?|refunds?|"
    r"tickets?|accounts?|balance|bank|subscriptions?|inbox|e-?mails?|mails?|messages?\s+from|calendar|"
    r"meetings?|appointments?|flights?|bookings?|reservations?|servers?|disk|database\s+password|salary|payslip|"
    r"credit\s+card|password"
)
_OWN_RECORD_NOUNS_ZH = r"订单|快递|包裹|物流|发票|账单|工单|账户|余额|银行卡|邮箱|邮件|日程|会议|航班|机票|预订|服务器|磁盘|工资|密码"
_MY_RECORD = rf"\b(?:my|our|mine)\s+(?:\w+\s+){{0,2}}(?:{_OWN_RECORD_NOUNS})\b"  # "my parcel", "our staging server"
_SERVICES = (r"淘宝|天猫|拼多多|京东|美团|饿了么|滴滴|携程|12306|禅道|飞书|钉钉|企业微信|支付宝"
             r"|jira|github|gitlab|slack|outlook|gmail|trello|asana|notion")
_OWN_RECORDS = re.compile(
    _MY_RECORD +
    rf"|\b(?:order|ticket|tracking|invoice|booking|case)\s*(?:no\.?|number|#|id)?\s*[:#]?\s*[A-Z]{{0,4}}-?\d{{3,}}\b"
    r"|\b(?:where\s+is|status\s+of|track)\s+(?:my|the)\s+(?:order|parcel|package|shipment|delivery)\b"
    rf"|(?:我的|我们的)?(?:{_OWN_RECORD_NOUNS_ZH})"
    r"(?:号|状态|信息|情况|还有|到哪|在哪|多少|里)"
    r"|(?:我的|我们的|我提的|我下的|我买的|我订的|我点的)[^，,。]{0,6}(?:订单|快递|包裹|外卖|工单|票)[^，,。]{0,8}(?:了没|没有|吗|呢|到哪|怎么)"
    r"|外卖[^，,。]{0,6}(?:还没|怎么|到哪|什么时候)|(?:快递|包裹)单号"
    # something bought, by what it is: "我京东买的洗衣机到哪了", "where's the lamp I ordered?"
    r"|(?:我|我们)[^，,。]{0,6}(?:买|订|点|寄|下单|网购)的[^，,。]{0,10}(?:到哪|到了没|到了吗|发货|什么时候到|寄到|送到|物流|还没到|签收"
    # how it stands now, on a platform the words do not name: "我在得物买的球鞋鉴定完了没"
    r"|[完好]了没|[完好]了吗)"
    r"|\b(?:i|we)\s+(?:ordered|bought|purchased)\b[^.?!]{0,40}\b(?:ship(?:ped)?|arriv\w*|deliver\w*|here\s+yet|on\s+(?:its|the)\s+way)\b"
    r"|\bwhere(?:'s|\s+is|\s+are)\s+(?:the|my|our)\s+(?:\w+\s+){1,2}(?:i|we)\s+(?:ordered|bought|purchased)\b"
    r"|(?:查|看|查询|查一下|看看|看一下)(?:一下)?(?:我的|我们的)?(?:订单|快递|包裹|物流|发票|账单|工单|账户|余额|邮箱|邮件|日程|航班|服务器)"
    r"|订单\s*[A-Za-z]{0,4}-?\d{3,}"
    # the person's calendar: "我明天有什么会", "下周一我有哪些安排", "what meetings do I have tomorrow"
    r"|(?:我|我们)[^，,。？?]{0,6}有(?:什么|哪些|几个|没有)(?:会议|安排|日程|约会|会(?=\s*(?:[吗呢？?。!！]|$|要开|要参加)))"
    r"|\bwhat\s+(?:meetings|appointments|events)\s+do\s+(?:i|we)\s+have\b|\bam\s+i\s+(?:free|busy|available)\s+(?:on|at|tomorrow|today|tonight|this|next|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    # what reached the person: "did I get a reply from HR?", "我收到银行的短信了吗", "HR回复我了吗"
    r"|\b(?:did|have|has|haven't|hasn't)\s+(?:i|we)\s+(?:got(?:ten)?|get|receive[d]?)(?:\s+(?:a|an|any|the|my|our))?"
    r"\s+(?:reply|response|answer|e-?mail|message|letter|call|text|invoice|parcel|package|delivery)s?\b"
    r"|\bheard\s+back\s+from\b|\b(?:any|new)\s+(?:replies|e-?mails|messages)\s+from\b"
    r"|(?:我|我们)(?:有没有|是否)?收到(?:了)?[^，,。]{0,10}(?:回复|回信|邮件|消息|短信|快递|包裹|通知)"
    r"|[^，,。]{1,8}(?:回复|回信给|回)(?:我|我们)了?(?:吗|没有|没)"
    # someone reaching the person: "did anyone email me about the lease?", "has Tom texted us back?",
    # "who called me this morning?"
    r"|\b(?:did|has|have|hasn't|haven't)\s+(?!you\b|i\b|we\b)(?:any(?:one|body)|some(?:one|body)|\w+)\s+(?:\w+\s+){0,3}"
    r"(?:e-?mail(?:ed)?|messag(?:e|ed)|text(?:ed)?|call(?:ed)?|ping(?:ed)?|dm(?:ed|'d)?|slack(?:ed)?|repl(?:y|ied)\s+to"
    r"|wr(?:ite|ote|itten)\s+(?:to|back\s+to)|got(?:ten)?\s+back\s+to)\s+(?:me|us)\b"
    r"|\bwho\s+(?:e-?mailed|messaged|texted|called|pinged|wrote\s+to|dm'?e?d)\s+(?:me|us)\b"
    r"|\bany\s+(?:new\s+)?(?:e-?mails?|messages?|texts?|calls?|voicemails?)\s+(?:for\s+me|today|this\s+morning|yet)\b"
    # the person's free time: "下周三下午我有空吗", "我周五晚上忙不忙", "do I have anything on Thursday?"
    r"|(?:今天|明天|后天|大后天|周[一二三四五六日天末]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|下周|这周|本周|月底|上午|下午|晚上|中午|\d+\s*[点号])"
    r"[^，,。？?]{0,8}(?:我|我们)[^，,。？?]{0,4}(?:有空|有时间|空闲|闲着|忙|有安排|有事|有约)(?:吗|么|没|不|嘛)"
    r"|(?:我|我们)[^，,。？?]{0,10}(?:有没有空|有没有时间|忙不忙|有空没|有没有安排|哪天有空|什么时候有空|几点有空)"
    r"|\bdo\s+(?:i|we)\s+have\s+(?:anything|something|any\s+(?:meetings?|plans?|appointments?|calls?)|time|a\s+(?:meeting|call|slot))"
    r"\s+(?:on|at|this|next|tomorrow|today|tonight|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\b(?:is|are)\s+(?:my|our)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|morning|afternoon|evening|day)"
    r"(?:\s+\w+)?\s+(?:free|open|busy|booked)\b"
    # something ordered, by the service or by how it was got: "饿了么点的奶茶到哪了", "拼多多买的那个还没发货吗"
    rf"|(?:{_SERVICES}|网上|外卖)[^，,。？?]{{0,12}}(?:到哪|到了没|到了吗|到没到|发货|什么时候到|怎么还没|还没到|还不到|送到|派送|签收)"
    r"|(?:点|买|订|寄|下单|网购)的[^，,。？?]{0,8}(?:到哪|到了没|到了吗|到没到|怎么还没|还没到|还不到|还没发货|发货了没|发货了吗)"
    # a record the person opened: "我上周提的那个IT工单有人接了没", "我报的那个故障处理了吗"
    r"|(?:我|我们)[^，,。？?]{0,6}(?:提|开|报|交|建|发)的[^，,。？?]{0,8}(?:工单|单子|申请|故障|报修|bug|需求|审批|报销)"
    r"[^，,。]{0,10}(?:了没|没有|吗|呢|怎么样|到哪|进度)", _F)


_LIVE_DATA = re.compile(
    r"(?:今天|明天|后天|现在|今晚|这周|本周|周末|下周|此刻|目前|实时)[^，,。？?]{0,8}(?:天气|下雨|下雪|气温|温度|空气质量|"
    r"股价|汇率|油价|金价|路况|堵车|新闻)"
    r"|(?:天气|气温|温度)(?:怎么样|如何|多少|预报|好吗|冷吗|热吗)|会下(?:雨|雪)吗"
    r"|(?:[A-Z]{2}\d{3,4}|航班)[^，,。]{0,8}(?:延误|起飞|到达|状态|准点|取消)"
    r"|\b(?:weather|forecast|temperature|rain(?:ing)?|snow(?:ing)?)\b[^.?!]{0,30}\b(?:today|tomorrow|tonight|now|"
    r"this\s+week(?:end)?|in\s+[A-Z][a-z]+)"
    r"|\b(?:today|tomorrow|tonight|right\s+now)\b[^.?!]{0,30}\b(?:weather|forecast|temperature|rain|snow)\b"
    r"|\b(?:stock\s+price|share\s+price|exchange\s+rate)\b[^.?!]{0,20}\b(?:today|now|currently)\b"
    r"|\bflight\s+[A-Z]{2}\s?\d{2,4}\b|\b[A-Z]{2}\d{3,4}\b[^.?!]{0,20}\b(?:delayed|on\s+time|landed|status)\b"
    # the weather asked for by what it means: "do I need an umbrella today?", "is it gonna be cold tomorrow?", "要带伞吗"
    r"|\bneed\s+(?:an?\s+)?(?:umbrella|raincoat|coat|jacket|sunscreen)\b"
    r"|\b(?:is|will)\s+it\s+(?:\w+\s+){0,2}(?:be\s+)?(?:cold|hot|warm|chilly|rainy|sunny|windy|snowy|freezing)\b"
    r"[^.?!]{0,30}\b(?:today|tomorrow|tonight|this\s+(?:morning|afternoon|evening|week(?:end)?)|out(?:side)?)\b"
    r"|(?:要|需要|得)带(?:把)?伞|(?:冷不冷|热不热|会不会下雨)"
    # what to wear today, how cold it is out: "今天出门要穿羽绒服吗", "外面几度了", "should I wear a jacket today?"
    r"|(?:今天|明天|后天|今晚|明早|现在|出门|待会|等会|一会)[^，,。？?]{0,8}(?:要|需要|得|该|用|能)(?:穿|带)[^，,。？?]{0,6}"
    r"(?:羽绒服|外套|大衣|棉袄|棉服|毛衣|秋裤|短袖|短裤|厚|薄|雨衣|雨伞|防晒)"
    r"|(?:外面|外头|室外|现在|今天|今晚|明天)[^，,。？?]{0,4}(?:几度|多少度|多冷|多热|冷吗|热吗)"
    r"|\bhow\s+(?:cold|hot|warm|chilly)\s+is\s+it\s+(?:\w+\s+)?(?:outside|out\s+there|right\s+now|now|today|tonight|this\s+morning)\b"
    r"|\bhow\s+many\s+degrees\s+is\s+it\b|\btemperature\s+(?:outside|out\s+there)\b"
    r"|\b(?:should|do|will)\s+i\s+(?:need\s+to\s+)?(?:wear|bring|take|pack)\s+(?:a\s+|an\s+|my\s+)?(?:\w+\s+)?"
    r"(?:coat|jacket|umbrella|sweater|scarf|gloves|shorts|raincoat|boots|layers)\b[^.?!]{0,20}\b(?:today|tonight|tomorrow|now|out(?:side)?)\b"
    # flights and machines: "明早北京飞成都最早的航班", "线上那台机器CPU满了没"
    r"|[\u4e00-\u9fff]{2,4}飞[\u4e00-\u9fff]{2,4}[^，,。]{0,6}航班|(?:机器|服务器|主机|实例)[^，,。]{0,6}(?:CPU|cpu|内存|磁盘|负载)"
    r"|(?:CPU|cpu|内存|磁盘|负载)[^，,。]{0,6}(?:满|多少|还剩|高不高|挂)"
    r"|\bis\s+(?:the|our|my)\s+(?:[\w-]+\s+){0,2}(?:server|host|machine|box|vm|instance|cluster|database|db|website|site)"
    r"\s+(?:still\s+)?(?:up|down|alive|online|offline|reachable)\b"
    # a machine of theirs, not this one (where the agent's tools can look): "the server's memory",
    # "disk space on the staging box"
    r"|\b(?:server|host|machine|box|vm|instance|cluster)(?:'s)?\s+(?:cpu|memory|ram|disk)\b"
    r"|\b(?:cpu|memory|ram|disk)\s+(?:usage|load|space)\b[^.?!]{0,30}\b(?:on|of)\s+(?:the\s+|our\s+|my\s+)?"
    r"(?:[\w-]+\s+)?(?:server|host|machine|box|vm|instance|cluster)\b", _F)
_THINGS_ZH = (r"订单|快递|包裹|外卖|邮件|会议|(?:的|个|场)会(?!议)|日程|工单|bug|缺陷|预约|预订|账单|报销单|审批"
              r"|航班|机票|火车票|车票|高铁|动车|酒店|房间")
_ACTS_ZH = (r"取消|退掉|退了|申请|回复|回一下|回个|改到|改成|改期|推迟|提前到|挪到|移到|催一下|催催|催|提个|提一个|关掉|驳回|通过"
            r"|改签|退票|值机|选座|续住|退房")
_THINGS_EN = r"orders?|deliver(?:y|ies)|e-?mails?|messages?|meetings?|calls?|appointments?|standups?|bookings?|reservations?|tickets?|bugs?|issues?"
_ACTS_EN = r"reply|respond|answer|move|reschedule|push\s+back|postpone|cancel|chase|hurry\s+up|close|approve|reject"
_WORLD_ACT = re.compile(
    r"^\s*(?:请|帮我|给我|麻烦|替我|帮忙)?(?:在日历上)?(?:订|预订|预约|买|购买|支付|付款|转账|汇款|打款"
    r"|发(?:一|个)?(?:封|条|份)?(?:邮件|短信|微信|消息)|打电话|重启|部署|回滚|下单|点(?:个|份)?外卖|约(?:个|一下)?|退(?:货|款|订|票|掉))"
    r"|给[^，,。]{1,8}(?:转账|打钱|汇款|发(?:一|个)?(?:封|条|份)?(?:邮件|短信|微信|消息)|打(?:个|一)?(?:个)?电话)"
    # the object first: "把上周买的鞋退掉", "把这个月的电费交了"
    r"|(?:把|将)[^，,。]{1,16}(?:退掉|退了|退货|退款|寄出去|寄回去|寄给|付了|交了|缴了|转给|发给)"
    r"|申请退款|(?:我要|我想)(?:退货|退款)"
    r"|^\s*(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:book|reserve|buy|purchase|pay|transfer|wire|order\s+(?:me\s+)?(?:a|an|some)"
    r"|send\s+(?:an?\s+)?(?:e-?mail|text|sms|message)|e-?mail\s+\w+|text\s+\w+|call\s+(?:my|\w+\s+at)|restart|reboot|"
    r"deploy|roll\s*back|(?:schedule|set\s+up|arrange|organi[sz]e)\s+(?:a|an)\s+(?:[\w-]+\s+)?(?:meeting|call|appointment|interview|sync|session)"
    r"|cancel\s+my\s+(?:order|booking|subscription|flight)"
    r"|return\s+(?:the|my|these|those|this|that)\s+\w+|refund\s+(?:me|my))\b"
    r"|\b(?:want|need|like)\s+to\s+return\s+(?:the|my|these|those|this|that)\b|\b(?:want|need|get)\s+(?:me\s+)?a\s+refund\b"
    # sent in the person's name, asked however politely: "would you be so kind as to send a quick email to my landlord"
    r"|\b(?:you|please|pls|kindly)\b[^.?!]{0,30}?\b(?:send|shoot|fire\s+off|forward)\s+(?:an?\s+|the\s+)?"
    r"(?:quick\s+|short\s+|brief\s+)?(?:e-?mail|text|sms|message|reply)\s+to\b"
    # records in the person's own systems: tickets, issues, bug reports
    r"|\b(?:open|create|file|raise|submit|close|assign)\s+(?:a\s+|an\s+|the\s+|my\s+|our\s+)?(?:new\s+)?(?:[\w-]+\s+)?"
    r"(?:ticket|issue|bug(?:\s+report)?|case|pull\s+request|jira)\b"
    r"|(?:开|建|提|创建|新建|关掉|关闭)(?:一个|个|一张|张)?(?:工单|bug单|缺陷单|需求单|jira)", _F)
# an action on one of the person's things, in one clause, either order: "那个订单帮我取消掉", "回一下
# 客户那封邮件", "把下周一的会改到三点", "提个bug", "reply to Tom's email", "move my 3pm meeting";
# asked of a named service of theirs ("在禅道上…", "美团外卖…帮我催一下"). A how-to question about
# the same ("怎么回复客户的邮件比较好") is advice, for chat.
_ACT_ON_THINGS = re.compile(
    rf"(?:{_THINGS_ZH})[^，,。？?；;]{{0,12}}(?:{_ACTS_ZH})|(?:{_ACTS_ZH})[^，,。？?；;]{{0,8}}(?:{_THINGS_ZH})"
    r"|(?:想|要|申请)(?:退货|退款|换货)"
    rf"|^\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:{_ACTS_EN})\s+(?:to\s+)?"
    rf"(?:my|our|the|that|this|his|her|their|\w+'s|tomorrow's|today's)\s+(?:\w+\s+){{0,2}}(?:{_THINGS_EN})\b"
    # a trip of theirs: "change my flight to Friday", "rebook our train for the evening"
    r"|^\s*(?:please\s+|pls\s+|can\s+you\s+|could\s+you\s+)?(?:change|switch|rebook|move|cancel|upgrade|extend|check\s+(?:me\s+)?in\s+for)\s+"
    r"(?:my|our)\s+(?:\w+\s+){0,2}(?:flight|train|hotel|room|seat|booking|reservation|trip)s?\b"
    rf"|(?:{_SERVICES})[^。？?]{{0,24}}(?:帮我|给我|替我|请你|麻烦)"
    rf"|(?:在|到)\s*(?:{_SERVICES})\s*(?:上|里)?[^。？?]{{0,8}}(?:提|发|建|开|回|改|删|取消|催)", _F)
# the person's machines elsewhere — a cluster, its pods, a server reached over ssh — asked about
# or acted on: "帮我看下k8s集群里有几个pod挂了", "ssh into db-02 and tail the logs", "线上那台服务器重启一下".
# The shell and file tools reach this machine only; "how does k8s restart a pod?" is knowledge.
_REMOTE_THING = (r"k8s|kubernetes|kubectl|集群|\bpods?\b|服务器|云主机|跳板机|堡垒机|机房|虚拟机|生产环境|测试环境|预发环境"
                 # a host by its name: "线上那台 api-03", "生产的 db-2"
                 r"|(?:线上|生产|测试|预发)?(?:那|这)台\s*[A-Za-z][\w.-]*\d[\w.-]*|(?:线上|生产)的?\s*[A-Za-z][\w.-]*-\d+"
                 r"|线上(?:环境|服务|机器|集群)|\b(?:my|our|the|that|these|those|all\s+the)\s+(?:[\w-]+\s+){0,2}"
                 r"(?:clusters?|pods?|servers?|vms?|instances?)\b"
                 r"|\b(?:prod|production|staging|remote|web|db|database|app|build)\s+(?:servers?|boxes|box|hosts?|machines?|clusters?|instances?|vms?)\b")
_REMOTE_STATE = (r"挂了|挂掉|宕机|宕了|掉线|重启|有几个|多少个|几台|状态|正常吗|还活着|跑着|起来了|满了|清理|清一下|清空|删掉|日志|部署|扩容|"
                 r"缩容|看下|看一下|查一下|查下|登录|登上|\bdown\b|\bcrash\w*|\brunning\b|\brestart\w*|\breboot\w*|\bclear\s+out\b"
                 r"|\bclean\s+up\b|\bdelete\b|\blogs?\b|\bdeploy\w*|\bscale\b|\bhealthy\b|\bfailing\b|\bpending\b|\bhow\s+many\b"
                 r"|\bcheck\b|\bup\b"
                 # what it has left or is using: "how much disk is left on our file server?", "服务器磁盘还剩多少空间"
                 r"|磁盘|硬盘|内存|负载|剩多少|还剩|\bdisk\b|\bdisk\s+space\b|\bmemory\b|\bram\b|\bcpu\b|\bload\b"
                 r"|\bhow\s+much\b|\bspace\s+left\b")
_REMOTE = re.compile(
    r"\bssh\s+(?:in(?:to)?\s+|onto\s+|to\s+)?(?:the\s+)?(?:[\w.-]+@)?[\w.-]*\d[\w.-]*\b|\bssh\s+(?:into|onto)\b"
    r"|\b(?:log\s*(?:in|on)(?:to)?|connect\s+to|remote\s+into)\s+(?:the\s+)?(?:[\w.-]+@)?[a-z][\w.]*-\d+\b"
    r"|(?:登录|登陆|登上|连上|连到|ssh\s*到?)\s*(?:到|上)?[^，,。]{0,8}(?:服务器|主机|机器|跳板机|堡垒机)"
    rf"|(?:{_REMOTE_THING})[^。？?!！]{{0,20}}(?:{_REMOTE_STATE})|(?:{_REMOTE_STATE})[^。？?!！]{{0,20}}(?:{_REMOTE_THING})", _F)
# knowledge about such things, and code written about them, is conversation
_KNOWLEDGE = re.compile(r"为什么|为啥|是什么|什么是|原理|解释|一般|通常|比较好|最好|建议|写(?:一个|个|段)?[^，,。]{0,20}(?:脚本|代码|程序|函数)"
                        r"|\bwhy\b|\bwhat\s+(?:is|are|does)\b|\bhow\s+(?:does|do|did|is|are|come)\b|\bexplain\b|\bin\s+general\b"
                        r"|\b(?:usually|typically|generally|normally)\b"
                        r"|\bwrite\b|\bscript\b", _F)
_HOW_TO = re.compile(r"怎么|如何|怎样|咋|\bhow\s+(?:do|should|can|could|would|to)\b|\bbest\s+way\b|\btips?\b", _F)


_REMINDER = re.compile(r"提醒|\bremind", _F)


_QUOTED = re.compile(r"“[^”]*”|「[^」]*」|『[^』]*』|‘[^’]*’|\"[^\"]*\"")


def _unquoted(text: str) -> str:
    """The message without what it quotes: "把“今天天气很好”翻译成英文" asks for a translation,
    not for today's weather."""
    return _QUOTED.sub(" ", text)


def needs_the_world(text: str) -> bool:
    text = _unquoted(text)
    if _REMINDER.search(text):  # "明天提醒我给李老师打电话" asks for a reminder, which Flora does
        return False
    if _WRITES_CODE.search(text) or computes_on_given_figures(text):
        return False  # "写一个检查服务器状态的脚本", "买了3斤苹果，每斤5块，一共多少钱": made here, from what is said
    if _IN_THE_DATABASE.search(text):
        return False  # "把这周退款超过500元的订单从库里捞出来": the organisation's data, where a capability looks
    records = _OWN_RECORDS.search(text)  # "my salary is 5000, …how much…" is a sum (above)
    general = _HOW_IT_WORKS.search(text) and not _SPECIFIC.search(text)  # "为什么航班会延误": how such things go
    return bool(records or not general and (_LIVE_DATA.search(text) or _WORLD_ACT.search(text))
                or (_ACT_ON_THINGS.search(text) or remote_machine(text)) and not _HOW_TO.search(text))


# where the organisation's data is looked up (not a database server, which is a machine elsewhere)
_IN_THE_DATABASE = re.compile(r"(?:从|在|去)(?:数据)?库(?:里|中)?|数据库(?:里|中)|(?<!仓)库里|表里"
                              r"|\b(?:in|from)\s+(?:the|our)\s+(?:db|database)\b(?!\s+(?:server|host|box|machine))", _F)
_WRITES_CODE = re.compile(r"(?:写|编)(?:一个|个|段|一段)?[^，,。？?]{0,20}(?:脚本|代码|程序|函数)"
                         r"|\b(?:write|draft|give\s+me)\s+(?:me\s+)?(?:a|an|some)?\s*(?:\w+\s+){0,3}"
                         r"(?:script|code|program|function|snippet)\b", _F)
# the person's own, or one thing in particular ("why is the staging server down?"), not such things in general
_SPECIFIC = re.compile(r"我|咱|这|那|\b(?:my|mine|our|ours|me|i|i'm|i've|the|this|that|these|those)\b", _F)
_THIS_MACHINE = re.compile(r"磁盘|硬盘|\bdisk\b|\bthis\s+(?:machine|box|computer)\b|这台(?:电脑|机器)|本机|\bworkspace\b|工作区", _F)


def beyond_this_machine(text: str) -> bool:
    """What no tool of this machine reaches: a machine of the person's elsewhere, their records
    in other systems (mailbox, tickets, orders — not this machine's disk), an act in the world.
    The agent's tools (a shell, files, the web) cannot look there, so it is not the agent's."""
    text = _unquoted(text)
    if _REMINDER.search(text):
        return False
    return bool(remote_machine(text) or _WORLD_ACT.search(text)
                or _ACT_ON_THINGS.search(text) and not _HOW_TO.search(text)
                or _OWN_RECORDS.search(text) and not _THIS_MACHINE.search(text))


# a sum on the person's own figures: "I earn 6200 a month and save 15%, how much in two years?"
_FIGURE = re.compile(r"(?<![A-Za-z0-9.#/-])\d+(?:[.,]\d+)?\s*(?:%|k|w|万|千|百|元|块|美元|刀|dollars?|bucks)?(?![A-Za-z0-9-])", _F)
_ASKS_AMOUNT = re.compile(
    r"多少|几(?:个|年|月|天|次|倍|成)|总共|一共|合计|平均|划算|能存|能攒|要还|算一?算|算一下|哪个(?:更)?(?:多|少|便宜|贵|省)"
    r"|\bhow\s+(?:much|many|long)\b|\bwhat(?:'s|\s+is|\s+will\s+be|\s+would\s+be)\s+(?:the\s+|my\s+)?(?:total|sum|average|result|difference|monthly|yearly|annual)"
    r"|\bcalculate\b|\bwork\s+out\b|\bwhich\s+is\s+(?:cheaper|more|less|better\s+value)\b", _F)


def computes_on_given_figures(text: str) -> bool:
    """A calculation on figures the message itself gives (two or more, and a question of how
    much / how many): every number is there, so it is conversation, not a look into the
    person's accounts."""
    return len(_FIGURE.findall(text)) >= 2 and bool(_ASKS_AMOUNT.search(text))


# how things work, asked of the things themselves: "how does k8s restart a pod?", "为什么航班会延误"
_HOW_IT_WORKS = re.compile(
    r"^\s*(?:(?:so|and|but|ok(?:ay)?|hmm+|eli5|quick\s+question)[:,\s]+)?(?:how\s+(?:does|do|did|is|are|can|could|would)\s+(?!i\b|we\b|you\b|my\b|our\b)"
    r"|why\s+(?:does|do|did|is|are|would|can)\s+(?!my\b|our\b)|what(?:'s|\s+is|\s+are)\s+(?:a|an)\s|explain\b|eli5\b)"
    r"|为什么|为啥|什么是|原理|是怎么[\u4e00-\u9fff]{1,4}的|怎么(?:工作|运作|实现)的", _F)


def asks_how_it_works(text: str) -> bool:
    """A question of how or why something works — knowledge, for chat — unless it is about the
    person's own things or the live world."""
    return bool(_HOW_IT_WORKS.search(text)) and not needs_the_world(text)


def remote_machine(text: str) -> bool:
    """A question about, or an act on, a machine of the person's other than this one (a
    cluster, a server, a host reached over ssh) — not a question of how such things work."""
    return bool(_REMOTE.search(text)) and not (_HOW_TO.search(text) or _KNOWLEDGE.search(text))



def asks_about_own_records(text: str) -> bool:
    return bool(_OWN_RECORDS.search(_unquoted(text)))


_NAMES_OWN_RECORDS = re.compile(rf"{_MY_RECORD}|(?:我的|我们的|我|我们)(?:{_OWN_RECORD_NOUNS_ZH})", _F)


def names_own_records(text: str) -> bool:
    """Whether a message names one of the person's own records ("my parcel", "我的银行卡"),
    asked about or not: "我的银行卡被冻结了" says no question, yet wants what only the bank can do."""
    return bool(_NAMES_OWN_RECORDS.search(_unquoted(text)))
